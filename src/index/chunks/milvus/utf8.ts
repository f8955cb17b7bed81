/** Cutting text to Milvus's VARCHAR limits, which count UTF-8 bytes, without splitting a character. */

/** The number of bytes of `bytes` from `start` that end on a character boundary and are at most `max`. */
function boundary(bytes: Buffer, start: number, max: number): number {
  let end = Math.min(bytes.length, start + max);
  // A byte 10xxxxxx continues a character: back off to the first byte of that character.
  while (end < bytes.length && end > start && (bytes[end]! & 0xc0) === 0x80) end--;
  return end;
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  return bytes.subarray(0, boundary(bytes, 0, maxBytes)).toString('utf8');
}

/** `text` in consecutive pieces of at most `maxBytes` UTF-8 bytes each; [''] for ''. */
export function splitUtf8(text: string, maxBytes: number): string[] {
  if (text.length * 3 <= maxBytes) return [text];
  const bytes = Buffer.from(text, 'utf8');
  const pieces: string[] = [];
  for (let start = 0; start < bytes.length || pieces.length === 0;) {
    const end = boundary(bytes, start, maxBytes);
    pieces.push(bytes.subarray(start, end).toString('utf8'));
    start = end;
  }
  return pieces;
}
