/**
 * JSON whose Uint8Array values (images) travel as `{ "$b64": "<base64>" }`: the format of the parse runs' work
 * files (activities/work-files.ts), which the parser process also writes the chunks in (src/chunking/chunk-file.ts).
 */
export function toJsonWithBytes(value: unknown): string {
  // `this[key]` is the value before toJSON: a Buffer would otherwise arrive as {type:'Buffer',data:[...]}.
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v) {
    const original = this[key];
    return original instanceof Uint8Array ? { $b64: Buffer.from(original).toString('base64') } : v;
  });
}

export function fromJsonWithBytes<T>(text: string): T {
  // A reviver is called for every value and doubles the parse (~0.4 s more for a book's 145,000 chunks, on
  // the event loop: bench/ingest/large-document.ts --paragraphs 290000): only a text that carries bytes needs it.
  if (!text.includes('"$b64"')) return JSON.parse(text) as T;
  return JSON.parse(text, (_k, v) => (v && typeof v === 'object' && typeof v.$b64 === 'string' ? new Uint8Array(Buffer.from(v.$b64, 'base64')) : v)) as T;
}
