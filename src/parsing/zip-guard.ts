import { ParseLimitError } from './errors.js';
import { inflatedSize } from './inflate.js';
import { formatBytes, LIMIT_VARIABLES, RATIO_GRACE_BYTES, type ParseLimits } from './limits.js';

const EOCD = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const EOCD64_LOCATOR = 0x07064b50;
const EOCD64 = 0x06064b50;
const CENTRAL_HEADER = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  declaredSize: number;
  localOffset: number;
}

interface Directory {
  /** Bytes before the archive proper (self-extracting stubs); offsets in the directory are relative to it. */
  base: number;
  offset: number;
  size: number;
  declaredCount: number;
}

type ZipLimits = Pick<ParseLimits, 'zipEntries' | 'inflateTotalBytes' | 'inflateEntryBytes' | 'inflateRatio'>;

/** Whether the bytes hold a zip end-of-central-directory record (where jszip and sheetjs start reading). */
export const hasZipDirectory = (bytes: Uint8Array): boolean => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).lastIndexOf(EOCD) >= 0;

const u64 = (view: DataView, at: number): number => Number(view.getBigUint64(at, true));

function refuse(filename: string, fact: string, limit: string, variable: string): ParseLimitError {
  return new ParseLimitError(filename, `was refused: ${fact} (limit ${limit}, ${variable})`);
}

const printable = (name: string): string => JSON.stringify(name.length > 120 ? `${name.slice(0, 120)}…` : name);

/** The central directory as the last end-of-central-directory record describes it (ZIP64 aware). */
function directoryOf(buffer: Buffer, view: DataView): Directory | undefined {
  const eocd = buffer.lastIndexOf(EOCD);
  if (eocd < 0 || eocd + 22 > buffer.length) return undefined;
  let declaredCount = view.getUint16(eocd + 10, true);
  let size = view.getUint32(eocd + 12, true);
  let offset = view.getUint32(eocd + 16, true);
  let end = eocd;
  const locator = eocd - 20;
  if (locator >= 0 && view.getUint32(locator, true) === EOCD64_LOCATOR) {
    const at = u64(view, locator + 8);
    // The locator's offset is relative to the archive start; a prefixed stub shifts it, so look just before it too.
    const record = [at, locator - 56].find((p) => p >= 0 && p + 56 <= buffer.length && view.getUint32(p, true) === EOCD64);
    if (record !== undefined) {
      declaredCount = u64(view, record + 32);
      size = u64(view, record + 40);
      offset = u64(view, record + 48);
      end = record;
    }
  }
  const base = end - (offset + size);
  if (base < 0) return undefined;
  return { base, offset, size, declaredCount };
}

/** Sizes and local offset from a ZIP64 extended-information field, for the values their 32-bit fields mark as 0xFFFFFFFF. */
function zip64Sizes(view: DataView, extraStart: number, extraEnd: number, entry: Entry, marked: { size: boolean; compressed: boolean; offset: boolean }): void {
  for (let p = extraStart; p + 4 <= extraEnd; ) {
    const id = view.getUint16(p, true);
    const length = view.getUint16(p + 2, true);
    if (id === 0x0001) {
      let q = p + 4;
      const take = () => {
        const v = q + 8 <= p + 4 + length ? u64(view, q) : undefined;
        q += 8;
        return v;
      };
      if (marked.size) entry.declaredSize = take() ?? entry.declaredSize;
      if (marked.compressed) entry.compressedSize = take() ?? entry.compressedSize;
      if (marked.offset) entry.localOffset = take() ?? entry.localOffset;
      return;
    }
    p += 4 + length;
  }
}

function entriesOf(buffer: Buffer, view: DataView, dir: Directory, filename: string, limits: ZipLimits): Entry[] {
  const variable = LIMIT_VARIABLES.zipEntries;
  if (dir.declaredCount > limits.zipEntries) {
    throw refuse(filename, `it holds ${dir.declaredCount} zip entries`, `${limits.zipEntries}`, variable);
  }
  const entries: Entry[] = [];
  const end = Math.min(buffer.length, dir.base + dir.offset + dir.size);
  // Walked to the directory's end rather than trusting its count: a 16-bit count wraps past 65535 entries.
  for (let p = dir.base + dir.offset; p + 46 <= end && view.getUint32(p, true) === CENTRAL_HEADER; ) {
    if (entries.length === limits.zipEntries) {
      throw refuse(filename, `it holds more than ${limits.zipEntries} zip entries`, `${limits.zipEntries}`, variable);
    }
    const nameLength = view.getUint16(p + 28, true);
    const extraLength = view.getUint16(p + 30, true);
    const commentLength = view.getUint16(p + 32, true);
    const entry: Entry = {
      name: buffer.toString('utf8', p + 46, Math.min(end, p + 46 + nameLength)),
      method: view.getUint16(p + 10, true),
      compressedSize: view.getUint32(p + 20, true),
      declaredSize: view.getUint32(p + 24, true),
      localOffset: view.getUint32(p + 42, true),
    };
    const marked = { size: entry.declaredSize === 0xffffffff, compressed: entry.compressedSize === 0xffffffff, offset: entry.localOffset === 0xffffffff };
    if (marked.size || marked.compressed || marked.offset) {
      zip64Sizes(view, p + 46 + nameLength, Math.min(end, p + 46 + nameLength + extraLength), entry, marked);
    }
    entries.push(entry);
    p += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** The compressed bytes of an entry, located through its local header as the unzip libraries do. */
function compressedData(buffer: Buffer, view: DataView, base: number, entry: Entry): Uint8Array | undefined {
  const header = base + entry.localOffset;
  if (header + 30 > buffer.length || view.getUint32(header, true) !== LOCAL_HEADER) return undefined;
  const start = header + 30 + view.getUint16(header + 26, true) + view.getUint16(header + 28, true);
  if (start > buffer.length) return undefined;
  return buffer.subarray(start, Math.min(buffer.length, start + entry.compressedSize));
}

/**
 * Refuses a zip-based file (DOCX, XLSX, PPTX, any zip) before a library unpacks it when it holds too
 * many entries, or when its entries inflate past the total or per-entry limit or past the compression
 * ratio limit. Sizes are measured by inflating each entry with a hard cap, never taken from the
 * archive's own (forgeable) headers; declared sizes only refuse early. Bytes without a central
 * directory pass: no unzip library can open them either.
 */
export async function guardZip(bytes: Uint8Array, filename: string, limits: ZipLimits): Promise<void> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const dir = directoryOf(buffer, view);
  if (!dir) return;
  const entries = entriesOf(buffer, view, dir, filename, limits);

  const totalLimit = `${formatBytes(limits.inflateTotalBytes)} in total`;
  const entryLimit = `${formatBytes(limits.inflateEntryBytes)} per part`;
  const declaredTotal = entries.reduce((sum, e) => sum + e.declaredSize, 0);
  if (declaredTotal > limits.inflateTotalBytes) {
    throw refuse(filename, `its zip entries declare ${formatBytes(declaredTotal)} uncompressed`, totalLimit, LIMIT_VARIABLES.inflateTotalBytes);
  }
  let total = 0;
  for (const entry of entries) {
    if (entry.declaredSize > limits.inflateEntryBytes) {
      throw refuse(filename, `${printable(entry.name)} declares ${formatBytes(entry.declaredSize)} uncompressed`, entryLimit, LIMIT_VARIABLES.inflateEntryBytes);
    }
    if (entry.method !== STORED && entry.method !== DEFLATED) continue; // no library here can unpack it, so it cannot inflate
    const data = compressedData(buffer, view, dir.base, entry);
    if (!data) continue;
    if (entry.method === STORED) {
      if (data.length > limits.inflateEntryBytes) {
        throw refuse(filename, `${printable(entry.name)} holds more than ${formatBytes(limits.inflateEntryBytes)}`, entryLimit, LIMIT_VARIABLES.inflateEntryBytes);
      }
      total += data.length;
    } else {
      const remaining = limits.inflateTotalBytes - total;
      const byRatio = Math.max(RATIO_GRACE_BYTES, data.length * limits.inflateRatio);
      const cap = Math.min(limits.inflateEntryBytes, remaining, byRatio);
      const { bytes: inflated, over } = await inflatedSize(data, 'raw', cap);
      if (over) {
        if (cap === byRatio && byRatio < Math.min(limits.inflateEntryBytes, remaining)) {
          throw refuse(filename, `${printable(entry.name)} inflates to more than ${limits.inflateRatio} times its compressed size`, `${limits.inflateRatio}×`, LIMIT_VARIABLES.inflateRatio);
        }
        if (cap === limits.inflateEntryBytes && limits.inflateEntryBytes < remaining) {
          throw refuse(filename, `${printable(entry.name)} inflates to more than ${formatBytes(limits.inflateEntryBytes)}`, entryLimit, LIMIT_VARIABLES.inflateEntryBytes);
        }
        throw refuse(filename, `its zip entries inflate to more than ${formatBytes(limits.inflateTotalBytes)}`, totalLimit, LIMIT_VARIABLES.inflateTotalBytes);
      }
      total += inflated;
    }
    if (total > limits.inflateTotalBytes) {
      throw refuse(filename, `its zip entries inflate to more than ${formatBytes(limits.inflateTotalBytes)}`, totalLimit, LIMIT_VARIABLES.inflateTotalBytes);
    }
  }
}
