import { tokenize } from './tokenizer.js';

/** The text with every word whose stem is one of `stems` wrapped in <em></em>, as RAGFlow's `highlight`. */
export function highlight(text: string, stems: ReadonlySet<string>): string {
  let out = '';
  let from = 0;
  for (const token of tokenize(text)) {
    if (!stems.has(token.stem)) continue;
    out += `${text.slice(from, token.start)}<em>${text.slice(token.start, token.end)}</em>`;
    from = token.end;
  }
  return out + text.slice(from);
}
