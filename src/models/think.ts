import type { ChatDelta } from './types.js';

const OPEN = '<think>';
const CLOSE = '</think>';

/** Length of the longest suffix of `text` that is a proper prefix of `tag` (a tag cut by a chunk edge). */
function partialTagAt(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}

/**
 * Separates `<think>...</think>` spans inside streamed content into 'reasoning' deltas. Models without a
 * native reasoning field emit their thinking this way; tags may be split across chunks, so a possible
 * tag prefix at a chunk's end is held back until the next chunk.
 */
export class ThinkSplitter {
  private inThink = false;
  private held = '';
  /** Drop the blank lines models put between `</think>` and the answer. */
  private trimNextAnswer = false;

  push(chunk: string): ChatDelta[] {
    let text = this.held + chunk;
    this.held = '';
    const out: ChatDelta[] = [];
    for (;;) {
      const tag = this.inThink ? CLOSE : OPEN;
      const at = text.indexOf(tag);
      if (at < 0) {
        const keep = partialTagAt(text, tag);
        this.held = text.slice(text.length - keep);
        this.emit(out, text.slice(0, text.length - keep));
        return out;
      }
      this.emit(out, text.slice(0, at));
      text = text.slice(at + tag.length);
      this.inThink = !this.inThink;
      if (!this.inThink) this.trimNextAnswer = true;
    }
  }

  /** Flushes a held partial tag at the end of the stream. */
  end(): ChatDelta[] {
    const out: ChatDelta[] = [];
    this.emit(out, this.held);
    this.held = '';
    return out;
  }

  private emit(out: ChatDelta[], text: string): void {
    if (!this.inThink && this.trimNextAnswer) {
      text = text.replace(/^\s+/, '');
      if (text) this.trimNextAnswer = false;
    }
    if (!text) return;
    const kind = this.inThink ? 'reasoning' : 'answer';
    const last = out[out.length - 1];
    if (last && last.kind === kind) last.text += text;
    else out.push({ kind, text });
  }
}

/** The answer part of a complete message, `<think>` spans removed. */
export function stripThink(content: string): string {
  const splitter = new ThinkSplitter();
  return [...splitter.push(content), ...splitter.end()]
    .filter((d) => d.kind === 'answer')
    .map((d) => d.text)
    .join('');
}
