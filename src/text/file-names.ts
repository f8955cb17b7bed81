/**
 * Uploaded file names are data, never paths (blobs are keyed by ids). They are still shown: in lists,
 * in the console, in a download's Content-Disposition. So the name kept is the one a person can read
 * without being misled: the last segment of a path (`../../x.pdf` → `x.pdf`), without control
 * characters (C0 with NUL, DEL, C1) and without the bidirectional controls that reorder what is shown
 * (U+202E makes `invoice‮fdp.exe` read as `invoiceexe.pdf`). docs/input-limits.md, "File names".
 */

// C0 controls (NUL included), DEL, C1 controls; bidi embeddings, overrides, isolates and marks.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The name as stored and shown; '' when nothing readable is left (the caller names a fallback). */
export function safeFileName(raw: string): string {
  const cleaned = raw.replace(UNSAFE, '');
  const last = cleaned.split(/[/\\]/).pop() ?? '';
  const name = last.trim();
  return name === '.' || name === '..' ? '' : name;
}

/**
 * A Content-Disposition header naming the file: an ASCII `filename` for old clients and the exact
 * UTF-8 name in `filename*` (RFC 6266 / 5987), both from the safe name, so no header can be split and
 * no name shown reordered.
 */
export function contentDisposition(type: 'inline' | 'attachment', name: string): string {
  const safe = safeFileName(name) || 'download';
  const ascii = safe.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  const encoded = encodeURIComponent(safe).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
