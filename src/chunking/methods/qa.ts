import type { ExtractedDocument, Position, Section } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { rowPairs, type Pair } from '../pairs.js';
import { unionPositions } from '../positions.js';

const QUESTION_PREFIX = /^\s*(?:q|question|问题|问)\s*\d*\s*[:：]\s*/i;
const ANSWER_PREFIX = /^\s*(?:a|answer|回答|答案|答)\s*\d*\s*[:：]\s*/i;
const HEADER_QUESTION = /^(q|questions?|问题)$/i;
const HEADER_ANSWER = /^(a|answers?|回答|答案)$/i;
const isHeader = (q: string, a: string) => HEADER_QUESTION.test(q) && HEADER_ANSWER.test(a);

/**
 * Question/answer pairs, one chunk each: "Question: …\tAnswer: …" with the question in `questions`.
 * Pairs come from table rows (first column question, second answer), and from text, read in the
 * first way that applies: "Q:"/"A:" lines (answers may run over several lines), tab-separated
 * lines, or titles as questions with the text under each as its answer.
 */
export function chunkQa(doc: ExtractedDocument): ChunkDraft[] {
  const pairs = [...rowPairs(doc.sections, isHeader, ['table']), ...textPairs(doc.sections)].sort(
    (a, b) => a.order - b.order,
  );

  const out: ChunkDraft[] = [];
  for (const { first, second, positions } of pairs) {
    const question = first.replace(QUESTION_PREFIX, '').trim();
    const answer = second.replace(ANSWER_PREFIX, '').trim();
    if (!question || !answer) continue;
    const chunk: ChunkDraft = { content: `Question: ${question}\tAnswer: ${answer}`, questions: [question] };
    if (positions) chunk.positions = positions;
    out.push(chunk);
  }
  return out;
}

interface Line {
  text: string;
  section: Section;
  order: number;
}

function textPairs(sections: readonly Section[]): Pair[] {
  const lines: Line[] = sections.flatMap((section, order) =>
    section.kind === 'text' || section.kind === 'title'
      ? section.text
          .split('\n')
          .filter((t) => t.trim().length > 0)
          .map((text) => ({ text, section, order }))
      : [],
  );
  if (lines.some((l) => QUESTION_PREFIX.test(l.text))) return prefixedPairs(lines);
  if (lines.some((l) => l.section.kind === 'text' && l.text.includes('\t'))) {
    return rowPairs(sections, isHeader, ['text']);
  }
  return headingPairs(lines);
}

/** "Q: …" opens a pair, "A: …" starts its answer; other lines continue whichever came last. */
function prefixedPairs(lines: readonly Line[]): Pair[] {
  const out: Pair[] = [];
  let current: { q: string[]; a: string[]; inAnswer: boolean; sections: Section[]; order: number } | undefined;
  const close = () => {
    if (current && current.a.length > 0) out.push(pair(current.q, current.a, current.sections, current.order));
    current = undefined;
  };
  for (const line of lines) {
    if (QUESTION_PREFIX.test(line.text)) {
      close();
      current = { q: [line.text], a: [], inAnswer: false, sections: [line.section], order: line.order };
    } else if (current && ANSWER_PREFIX.test(line.text) && !current.inAnswer) {
      current.inAnswer = true;
      current.a.push(line.text);
      current.sections.push(line.section);
    } else if (current) {
      (current.inAnswer ? current.a : current.q).push(line.text);
      current.sections.push(line.section);
    }
  }
  close();
  return out;
}

/** A title is a question; the text lines up to the next title are its answer. */
function headingPairs(lines: readonly Line[]): Pair[] {
  const out: Pair[] = [];
  let current: { q: string; a: string[]; sections: Section[]; order: number } | undefined;
  const close = () => {
    if (current && current.a.length > 0) out.push(pair([current.q], current.a, current.sections, current.order));
    current = undefined;
  };
  for (const line of lines) {
    if (line.section.kind === 'title') {
      close();
      current = { q: line.text, a: [], sections: [line.section], order: line.order };
    } else if (current) {
      current.a.push(line.text);
      current.sections.push(line.section);
    }
  }
  close();
  return out;
}

function pair(q: readonly string[], a: readonly string[], sections: readonly Section[], order: number): Pair {
  const positions: Position[] | undefined = unionPositions(sections.map((s) => s.positions));
  return { first: q.join('\n').trim(), second: a.join('\n').trim(), positions, order };
}
