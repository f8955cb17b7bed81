import type { Delimiters } from '../text/delimiters.js';
import { splitKeepingDelimiters, splitOnCustomDelimiters } from '../text/delimiters.js';
import type { ChunkDraft } from './types.js';

/**
 * parent_child: every chunk is cut at the children delimiters and each child becomes a chunk that
 * is matched on its own text and carries the whole chunk as `parent_content`, the context handed
 * to readers. A chunk that does not split stays as it is.
 */
export function splitIntoChildren(chunks: readonly ChunkDraft[], delimiters: Delimiters): ChunkDraft[] {
  return chunks.flatMap((parent) => {
    const children = splitOnCustomDelimiters(parent.content, delimiters.custom)
      .flatMap((segment) => splitKeepingDelimiters(segment, delimiters.single))
      .map((text) => text.trim())
      .filter((text) => text.length > 0);
    if (children.length <= 1) return [parent];
    return children.map((content) => ({ ...parent, content, parent_content: parent.content }));
  });
}
