import type { ExtractedDocument, Position, Section } from '../../../src/parsing/types.js';

/** Hand-built extracted documents for chunker tests. */
export function doc(sections: Section[], meta: Record<string, string> = {}, pages = 1): ExtractedDocument {
  return { sections, pages, meta };
}

export const text = (t: string, extra: Partial<Section> = {}): Section => ({ kind: 'text', text: t, ...extra });
export const title = (t: string, level?: number, extra: Partial<Section> = {}): Section => ({
  kind: 'title',
  text: t,
  ...(level === undefined ? {} : { level }),
  ...extra,
});
export const table = (rows: string[][], extra: Partial<Section> = {}): Section => ({
  kind: 'table',
  text: rows.map((r) => r.join(' | ')).join('\n'),
  rows,
  ...extra,
});
export const image = (t: string, bytes: Uint8Array, extra: Partial<Section> = {}): Section => ({
  kind: 'image',
  text: t,
  image: bytes,
  ...extra,
});
export const pos = (page: number, top: number): Position => [page, 10, 500, top, top + 12];

/** Deterministic prose: `n` distinct sentences of about 12 tokens each. */
export function sentences(n: number, tag = 's'): string {
  return Array.from({ length: n }, (_, i) => `Sentence ${tag}${i} tells about the river and the old stone bridge.`).join(' ');
}
