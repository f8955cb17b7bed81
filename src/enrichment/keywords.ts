import type { ChunkDraft } from '../chunking/types.js';
import type { ChatModel } from '../models/types.js';
import type { EnrichmentRepo } from '../store/enrichment.js';
import { countTokens, splitByTokenWindow } from '../text/tokens.js';
import { cachedCalls, type EnrichmentCall } from './cached-calls.js';
import { KEYWORD_MAX_CHARS, QUESTION_MAX_CHARS, parseKeywords, parseQuestions } from './keywords-answers.js';

/** parser_config.auto_keywords / auto_questions: how many of each the model writes per chunk. */
export interface KeywordSettings {
  keywords: number;
  questions: number;
}

export const MAX_KEYWORDS = 32;
export const MAX_QUESTIONS = 10;

/** The settings of a (merged) parser_config; anything but a positive integer means none. */
export function keywordSettings(parserConfig: Record<string, unknown>): KeywordSettings {
  const count = (value: unknown, max: number) => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? Math.min(value, max) : 0);
  return { keywords: count(parserConfig.auto_keywords, MAX_KEYWORDS), questions: count(parserConfig.auto_questions, MAX_QUESTIONS) };
}

export function wantsEnrichment(settings: KeywordSettings): boolean {
  return settings.keywords > 0 || settings.questions > 0;
}

/** What the progress message calls the work: "keywords", "questions" or "keywords and questions". */
export function enrichmentLabel(settings: KeywordSettings): string {
  return [settings.keywords > 0 && 'keywords', settings.questions > 0 && 'questions'].filter(Boolean).join(' and ');
}

/**
 * A chunk longer than this is cut to its first this-many tokens for the prompt (as RAGFlow cuts it to
 * the model's context): the built-in chat model has 4,096 tokens of context for prompt and answer.
 */
const PASSAGE_MAX_TOKENS = 3000;

const KEYWORDS_PROMPT = (n: number) => `You pick the search keywords of a passage from a document.
Give the ${n} most important keywords or short phrases of the passage: the names, terms and concepts someone would type into a search box to find it.
- Use the passage's own language and wording.
- Most important first; no two with the same meaning.
- Output only the keywords on one line, separated by commas: no numbering, no explanation.`;

const QUESTIONS_PROMPT = (n: number) => `You write the questions that a passage from a document answers.
Give ${n} question${n === 1 ? '' : 's'} a reader could ask whose answer is in the passage.
- Each question about a different point; together they cover the passage's main content.
- Each question complete on its own: name the subject instead of saying "it" or "the passage".
- Use the passage's own language.
- Output only the questions, one per line: no numbering, no explanation.`;

function passage(content: string): string {
  // A token is at least one character: a short text needs no count.
  if (content.length <= PASSAGE_MAX_TOKENS || countTokens(content) <= PASSAGE_MAX_TOKENS) return content;
  return splitByTokenWindow(content, PASSAGE_MAX_TOKENS)[0]!;
}

/** A JSON list of 1 to `n` strings of at most `chars` characters (with no lower bound, the small model answers []) (parseKeywords / parseQuestions read it). */
function stringList(n: number, chars: number): Record<string, unknown> {
  return { type: 'array', items: { type: 'string', minLength: 2, maxLength: chars }, minItems: 1, maxItems: n };
}

/** The model call that asks for `n` keywords of a chunk. Its cache key covers the prompt, so a new prompt asks again. */
export function keywordsCall(content: string, n: number): EnrichmentCall {
  return {
    kind: 'chunk-keywords',
    messages: [
      { role: 'system', content: KEYWORDS_PROMPT(n) },
      { role: 'user', content: passage(content) },
    ],
    options: { temperature: 0.2, max_tokens: 32 + 16 * n },
    builtinSchema: stringList(n, KEYWORD_MAX_CHARS),
  };
}

/** The model call that asks for `n` questions a chunk answers. */
export function questionsCall(content: string, n: number): EnrichmentCall {
  return {
    kind: 'chunk-questions',
    messages: [
      { role: 'system', content: QUESTIONS_PROMPT(n) },
      { role: 'user', content: passage(content) },
    ],
    options: { temperature: 0.2, max_tokens: 32 + 64 * n },
    builtinSchema: stringList(n, QUESTION_MAX_CHARS),
  };
}

export interface EnrichmentProgress {
  /** Chunks finished. */
  done: number;
  total: number;
  /** Calls made to the model now. */
  model_calls: number;
  /** Calls answered from the enrichment cache (paid for by an earlier run). */
  cached_calls: number;
  /** Prompt + answer tokens of the calls made now. */
  tokens: number;
}

export interface EnrichOptions {
  cache: EnrichmentRepo;
  /** The tenant whose model answers: cached answers are never shared between tenants. */
  tenantId: string;
  model: ChatModel;
  concurrency: number;
  signal?: AbortSignal;
  /** Chunks per batch: one round of concurrent calls, one progress report. */
  batchSize?: number;
  /** After each batch (awaited: a slow report slows the work rather than piling up). */
  onProgress?: (progress: EnrichmentProgress) => void | Promise<void>;
}

const DEFAULT_BATCH = 16;

/**
 * The chunks with `settings.keywords` generated keywords added to their important_keywords and
 * `settings.questions` generated questions added to their questions (after any the chunk method set).
 * Every answer comes from the enrichment cache when the same model was asked the same before, so a
 * re-parse or a retried attempt pays only for what was never answered. A model failure rejects; an
 * answer with nothing usable adds nothing.
 */
export async function enrichChunks(drafts: ChunkDraft[], settings: KeywordSettings, options: EnrichOptions): Promise<{ drafts: ChunkDraft[]; progress: EnrichmentProgress }> {
  const progress: EnrichmentProgress = { done: 0, total: drafts.length, model_calls: 0, cached_calls: 0, tokens: 0 };
  const out: ChunkDraft[] = [];
  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH);
  for (let start = 0; start < drafts.length; start += batchSize) {
    const batch = drafts.slice(start, start + batchSize);
    const calls: { chunk: number; field: 'keywords' | 'questions'; call: EnrichmentCall }[] = [];
    for (const [i, d] of batch.entries()) {
      // A chunk without text (an image alone) has nothing to ask about.
      if (!d.content.trim()) continue;
      if (settings.keywords > 0) calls.push({ chunk: i, field: 'keywords', call: keywordsCall(d.content, settings.keywords) });
      if (settings.questions > 0) calls.push({ chunk: i, field: 'questions', call: questionsCall(d.content, settings.questions) });
    }
    const results = await cachedCalls(options.cache, options.model, calls.map((c) => c.call), {
      tenantId: options.tenantId,
      concurrency: options.concurrency,
      signal: options.signal,
      onResult: (r) => {
        if (r.cached) progress.cached_calls++;
        else progress.model_calls++;
        progress.tokens += r.tokens;
      },
    });
    const generated = batch.map(() => ({ keywords: [] as string[], questions: [] as string[] }));
    for (const [j, c] of calls.entries()) {
      const text = results[j]!.text;
      if (c.field === 'keywords') generated[c.chunk]!.keywords = parseKeywords(text, settings.keywords);
      else generated[c.chunk]!.questions = parseQuestions(text, settings.questions);
    }
    for (const [i, d] of batch.entries()) {
      out.push({
        ...d,
        important_keywords: union(d.important_keywords, generated[i]!.keywords),
        questions: union(d.questions, generated[i]!.questions),
      });
    }
    progress.done = out.length;
    await options.onProgress?.({ ...progress });
  }
  return { drafts: out, progress };
}

/** `first` then the items of `more` not in it (case-insensitively). */
function union(first: string[] | undefined, more: string[]): string[] {
  const seen = new Set((first ?? []).map((s) => s.toLowerCase()));
  return [...(first ?? []), ...more.filter((s) => !seen.has(s.toLowerCase()) && seen.add(s.toLowerCase()))];
}
