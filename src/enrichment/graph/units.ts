import { createHash } from 'node:crypto';
import { countTokens, splitByTokenWindow } from '../../text/tokens.js';

/** A chunk as the extraction reads it. */
export interface SourceChunk {
  id: string;
  documentId: string;
  content: string;
}

/** The text of one extraction call: consecutive chunks of one document, at most `budget` tokens. */
export interface ExtractionUnit {
  key: string;
  chunkIds: string[];
  text: string;
}

/**
 * Groups chunks (in order) into extraction units: a unit never spans two documents and holds at most
 * `budget` tokens; a chunk longer than that is read up to its first `budget` tokens.
 */
export function extractionUnits(chunks: SourceChunk[], budget: number): ExtractionUnit[] {
  const units: ExtractionUnit[] = [];
  let ids: string[] = [];
  let texts: string[] = [];
  let tokens = 0;
  let documentId = '';
  const flush = () => {
    if (!ids.length) return;
    units.push({ key: createHash('sha256').update(ids.join(',')).digest('hex'), chunkIds: ids, text: texts.join('\n\n') });
    ids = [];
    texts = [];
    tokens = 0;
  };
  for (const chunk of chunks) {
    const content = chunk.content.trim();
    if (!content) continue;
    let n = countTokens(content);
    let text = content;
    if (n > budget) {
      text = splitByTokenWindow(content, budget)[0]!;
      n = budget;
    }
    if (chunk.documentId !== documentId || tokens + n > budget) flush();
    documentId = chunk.documentId;
    ids.push(chunk.id);
    texts.push(text);
    tokens += n;
  }
  flush();
  return units;
}
