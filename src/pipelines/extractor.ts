/**
 * The Extractor component: one model call per chunk, its answer written to the chunk's `field_name`. Pure:
 * the calls it asks and what it does with the answers (the activity makes the calls, through the cache).
 */
import type { ChunkDraft } from '../chunking/types.js';
import type { EnrichmentCall } from '../enrichment/cached-calls.js';
import { parseKeywords, parseQuestions } from '../enrichment/keywords-answers.js';
import { MAX_KEYWORDS, MAX_QUESTIONS } from '../enrichment/keywords.js';
import { isRecord } from '../records.js';

/** A chunk between pipeline steps: a chunk draft plus what Extractors wrote. */
export interface PipelineChunk extends ChunkDraft {
  summary?: string;
  /** Facts an Extractor read from the chunk (field "metadata"); the Tokenizer adds them to the document's meta_fields. */
  metadata?: Record<string, unknown>;
  /** Any other field an Extractor wrote, by name. */
  fields?: Record<string, string>;
}

/** A reference to the chunk being processed in a prompt: `{Component:Id@chunks}` (or `@text`, `@content`). */
const CHUNK_REFERENCE = /\{[^{}@]+@(chunks|text|content|markdown|json|html)\}/g;

interface PromptMessage {
  role?: unknown;
  content?: unknown;
}

/** The text of the chunk the prompt is about: its content, or what the field names when it is a chunk field. */
function chunkText(chunk: PipelineChunk): string {
  return chunk.content;
}

/**
 * The model call for one chunk: the component's system prompt and its messages, each reference to the
 * previous step's chunks replaced by this chunk's text (a prompt without one gets the text as its last
 * user message), with the component's temperature and max_tokens. `stepId` keeps components' answers
 * apart in the cache.
 */
export function extractorCall(params: Record<string, unknown>, stepId: string, chunk: PipelineChunk): EnrichmentCall {
  const text = chunkText(chunk);
  const fill = (content: string) => content.replace(CHUNK_REFERENCE, () => text);
  const prompts = Array.isArray(params.prompts) ? (params.prompts as PromptMessage[]) : [];
  const messages = prompts
    .filter((m) => typeof m.content === 'string')
    .map((m) => ({ role: m.role === 'assistant' ? ('assistant' as const) : ('user' as const), content: fill(m.content as string) }));
  const mentionsChunk = prompts.some((m) => typeof m.content === 'string' && new RegExp(CHUNK_REFERENCE.source).test(m.content));
  if (!mentionsChunk) messages.push({ role: 'user', content: text });
  const system = typeof params.sys_prompt === 'string' && params.sys_prompt.trim() ? [{ role: 'system' as const, content: fill(params.sys_prompt) }] : [];
  const number = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
  const temperature = number(params.temperature);
  const maxTokens = params.maxTokensEnabled === true ? number(params.max_tokens) : undefined;
  return {
    kind: `pipeline-extractor:${stepId}:${String(params.field_name)}`,
    messages: [...system, ...messages],
    options: { ...(temperature !== undefined ? { temperature } : {}), ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}) },
  };
}

/** The first JSON object in an answer (a fenced block or bare), or undefined. */
function jsonObject(answer: string): Record<string, unknown> | undefined {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const value: unknown = JSON.parse(answer.slice(start, end + 1));
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The chunk with the answer written to `field`: keywords join the chunk's searched keywords, questions its
 * searched (and embedded) questions, metadata the facts of a JSON object answer (an answer that is not
 * one adds nothing), summary and any other field the answer's text.
 */
export function withAnswer(chunk: PipelineChunk, field: string, answer: string): PipelineChunk {
  const text = answer.trim();
  switch (field) {
    case 'keywords':
      return { ...chunk, important_keywords: [...(chunk.important_keywords ?? []), ...parseKeywords(text, MAX_KEYWORDS)] };
    case 'questions':
      return { ...chunk, questions: [...(chunk.questions ?? []), ...parseQuestions(text, MAX_QUESTIONS)] };
    case 'metadata': {
      const facts = jsonObject(text);
      return facts ? { ...chunk, metadata: { ...(chunk.metadata ?? {}), ...facts } } : chunk;
    }
    case 'summary':
      return { ...chunk, summary: text };
    default:
      return { ...chunk, fields: { ...(chunk.fields ?? {}), [field]: text } };
  }
}

/**
 * The text the Tokenizer embeds for a chunk, from its `fields` (RAGFlow's names): "text" the content,
 * "summary", "questions" and "keywords" what Extractors wrote, any other name an Extractor's field.
 * Fields the chunk does not have are left out; none left: the content.
 */
export function tokenizerText(chunk: PipelineChunk, fields: string[]): string {
  const parts = fields.map((f) => {
    if (f === 'text' || f === 'content') return chunk.content;
    if (f === 'summary') return chunk.summary ?? '';
    if (f === 'questions') return (chunk.questions ?? []).join('\n');
    if (f === 'keywords') return (chunk.important_keywords ?? []).join(', ');
    return chunk.fields?.[f] ?? '';
  });
  const text = parts.filter((p) => p.trim()).join('\n');
  return text || chunk.content;
}

/** The facts the chunks' metadata Extractors found, merged (the first chunk to state a key wins). */
export function documentMetadata(chunks: PipelineChunk[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of chunks) for (const [k, v] of Object.entries(c.metadata ?? {})) if (!(k in out) && (typeof v === 'string' || typeof v === 'number' || Array.isArray(v))) out[k] = v;
  return out;
}
