import { stripThink } from '../models/think.js';

/**
 * Reading the model's keyword and question answers. Models number, bullet, quote and label their
 * lists however the prompt asks, so the parsing accepts the usual shapes (a comma list, one per line,
 * a numbered or bulleted list, a JSON array, a fenced block) and drops what cannot be a keyword or a
 * question; an answer with nothing usable gives an empty list, never an error.
 */

/** A keyword is a short phrase: a longer item is a sentence (an explanation or a refusal), not a keyword. */
const KEYWORD_MAX_WORDS = 8;
export const KEYWORD_MAX_CHARS = 64;
export const QUESTION_MAX_CHARS = 500;

/** `- `, `* `, `• `, `1. `, `1) `, `(1) `, `[1] `, `a) `, `Q1: `, `Q: ` at the start of an item (not the `3.` of `3.5 mm`). */
const LIST_MARKER = /^(?:[-*+•·‣▪●◦–—>]+\s*|\(?\d{1,3}[.)\]:](?!\d)\s*|\[\d{1,3}\]\s*|\(?[a-z][.)]\s+|(?:q|question)\s*\d{1,3}\s*[.):\-–]\s*|(?:q|question)\s*[:：]\s*)/iu;
/** `Keywords:`, `Questions:`, `Here are 3 questions:` and the like, before the first item. */
const LABEL = /^[^:：?？\n]{0,60}?\b(?:keywords?|key\s*phrases?|phrases?|tags?|questions?)\b[^:：?？\n]{0,30}[:：]\s*/iu;
const QUOTES = /^[\s"'`“”‘’«»「」『』*_]+|[\s"'`“”‘’«»「」『』*_]+$/gu;
const HAS_WORD = /[\p{L}\p{N}]/u;

/** The keywords in `answer`: at most `limit`, distinct (case-insensitively), in the model's order. */
export function parseKeywords(answer: string, limit: number): string[] {
  const items = listItems(answer) ?? unfence(answer).split(/[,，、;；\n]+/u);
  const keywords = items
    .map((item) => clean(item).replace(/[.。!！]+$/u, '').trim())
    .filter((k) => HAS_WORD.test(k) && k.length <= KEYWORD_MAX_CHARS && k.split(/\s+/).length <= KEYWORD_MAX_WORDS);
  return distinct(keywords).slice(0, Math.max(0, limit));
}

/** The questions in `answer`: at most `limit`, distinct (case-insensitively), in the model's order. */
export function parseQuestions(answer: string, limit: number): string[] {
  const items = listItems(answer) ?? unfence(answer).split('\n').flatMap(splitRunOnQuestions);
  const questions = items
    .map(clean)
    // "Here are three questions:" introduces the list; it is not one of them.
    .filter((q) => HAS_WORD.test(q) && !/[:：]$/u.test(q) && q.length <= QUESTION_MAX_CHARS);
  return distinct(questions).slice(0, Math.max(0, limit));
}

/** The strings of a JSON array answer (or of the first array in a JSON object), else undefined. */
function listItems(answer: string): string[] | undefined {
  const text = unfence(answer).trim();
  if (!/^[[{]/.test(text)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const list = Array.isArray(parsed) ? parsed : Object.values(parsed as object).find(Array.isArray);
  // An object without a list (`{"error": "..."}`) has nothing usable.
  if (!Array.isArray(list)) return [];
  return list.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number').map(String);
}

/** The answer without reasoning and without a ``` fence around it. */
function unfence(answer: string): string {
  const text = stripThink(answer).trim();
  const fenced = /^```[\w-]*\s*\n?([\s\S]*?)\n?```$/.exec(text);
  return fenced ? fenced[1]! : text;
}

/** "What is X? How does Y work?" on one line is two questions. */
function splitRunOnQuestions(line: string): string[] {
  return line.match(/[^?？]+[?？]+|[^?？]+$/gu) ?? [line];
}

function clean(item: string): string {
  let text = item.replace(/\s+/g, ' ').trim();
  text = text.replace(LABEL, '');
  for (let i = 0; i < 2 && LIST_MARKER.test(text); i++) text = text.replace(LIST_MARKER, '');
  return text.replace(QUOTES, '').trim();
}

function distinct(items: string[]): string[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = item.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
