import { flowing, type Extractor } from '../extractor.js';
import { decodeText, splitParagraphs } from '../text.js';

export const extractText: Extractor = async (bytes) =>
  flowing(splitParagraphs(decodeText(bytes)).map((text) => ({ kind: 'text', text })));

const MAX_BLOCK_LINES = 60;

/**
 * Source split where a blank line is followed by an unindented line (a new top-level definition),
 * then neighbours merged up to MAX_BLOCK_LINES so imports and one-liners don't become sections alone.
 */
export function codeBlocks(source: string): string[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: string[][] = [];
  let current: string[] = [];
  lines.forEach((line, i) => {
    const startsDefinition = i > 0 && lines[i - 1].trim() === '' && /^[^\s})\]]/.test(line);
    if (startsDefinition && current.some((l) => l.trim() !== '')) {
      blocks.push(current);
      current = [];
    }
    current.push(line);
  });
  blocks.push(current);

  const merged: string[][] = [];
  for (const block of blocks) {
    const last = merged[merged.length - 1];
    if (last && last.length + block.length <= MAX_BLOCK_LINES) last.push(...block);
    else merged.push([...block]);
  }
  return merged.map((block) => block.join('\n').replace(/^\s*\n|\s+$/g, '')).filter((block) => block !== '');
}

export const extractCode: Extractor = async (bytes) =>
  flowing(codeBlocks(decodeText(bytes)).map((text) => ({ kind: 'code', text })));
