export interface ImageSize {
  width: number;
  height: number;
}

const ascii = (bytes: Uint8Array, at: number, text: string): boolean =>
  at + text.length <= bytes.length && [...text].every((c, i) => bytes[at + i] === c.charCodeAt(0));

function png(view: DataView): ImageSize | undefined {
  // Signature (8), IHDR length (4) and type (4), then width and height.
  if (view.byteLength < 24) return undefined;
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

function jpeg(bytes: Uint8Array, view: DataView): ImageSize | undefined {
  for (let p = 2; p + 9 < bytes.length; ) {
    if (bytes[p] !== 0xff) return undefined;
    const marker = bytes[p + 1];
    if (marker === 0xff) {
      p++;
      continue;
    }
    // Markers without a length: standalone ones (TEM, RSTn).
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      p += 2;
      continue;
    }
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: view.getUint16(p + 5), width: view.getUint16(p + 7) };
    }
    p += 2 + view.getUint16(p + 2);
  }
  return undefined;
}

function bmp(view: DataView): ImageSize | undefined {
  if (view.byteLength < 26) return undefined;
  if (view.getUint32(14, true) === 12) return { width: view.getUint16(18, true), height: view.getUint16(20, true) };
  return { width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) };
}

function tiff(view: DataView): ImageSize | undefined {
  const little = view.getUint8(0) === 0x49;
  const ifd = view.getUint32(4, little);
  if (ifd + 2 > view.byteLength) return undefined;
  const count = view.getUint16(ifd, little);
  let width: number | undefined;
  let height: number | undefined;
  for (let i = 0; i < count; i++) {
    const at = ifd + 2 + i * 12;
    if (at + 12 > view.byteLength) break;
    const tag = view.getUint16(at, little);
    const type = view.getUint16(at + 2, little);
    const value = type === 3 ? view.getUint16(at + 8, little) : view.getUint32(at + 8, little);
    if (tag === 256) width = value;
    if (tag === 257) height = value;
  }
  return width !== undefined && height !== undefined ? { width, height } : undefined;
}

function webp(bytes: Uint8Array, view: DataView): ImageSize | undefined {
  if (ascii(bytes, 12, 'VP8 ') && bytes.length >= 30) return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  if (ascii(bytes, 12, 'VP8L') && bytes.length >= 25) {
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (ascii(bytes, 12, 'VP8X') && bytes.length >= 30) {
    const u24 = (at: number) => bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16);
    return { width: u24(24) + 1, height: u24(27) + 1 };
  }
  return undefined;
}

/**
 * Pixel dimensions read from the image's header (PNG, JPEG, GIF, BMP, TIFF, WebP), without decoding
 * it; undefined when the header cannot be read (the decoder then reports the damage).
 */
export function imageSize(bytes: Uint8Array): ImageSize | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  try {
    switch (imageFormat(bytes)) {
      case 'PNG': return png(view);
      case 'JPEG': return jpeg(bytes, view);
      case 'GIF': return bytes.length >= 10 ? { width: view.getUint16(6, true), height: view.getUint16(8, true) } : undefined;
      case 'BMP': return bmp(view);
      case 'TIFF': return tiff(view);
      case 'WebP': return webp(bytes, view);
      default: return undefined;
    }
  } catch (error) {
    if (error instanceof RangeError) return undefined; // a header cut short
    throw error;
  }
}

/** The image format the first bytes announce (their magic), if any of those imageSize reads. */
export function imageFormat(bytes: Uint8Array): 'PNG' | 'JPEG' | 'GIF' | 'BMP' | 'TIFF' | 'WebP' | undefined {
  if (bytes[0] === 0x89 && ascii(bytes, 1, 'PNG')) return 'PNG';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'JPEG';
  if (ascii(bytes, 0, 'GIF8')) return 'GIF';
  if (ascii(bytes, 0, 'BM')) return 'BMP';
  if (ascii(bytes, 0, 'II*\0') || ascii(bytes, 0, 'MM\0*')) return 'TIFF';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return 'WebP';
  return undefined;
}
