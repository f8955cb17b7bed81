/** How an Agent's tool calls are reported: as events of the run, each with a short summary of what came back. */
import type { RetrievedSummary, ToolCallEvent } from '../run-types.js';
import type { RunEvent } from '../../events/types.js';
import type { RetrievalOutput } from './retrieval-tool.js';

/** Chunks listed in a tool event: RAGFlow's default `top_n` of a Retrieval. */
const LISTED_CHUNKS = 8;
/** Characters of each listed chunk, and of a tool's text result, in an event. */
const SNIPPET_CHARS = 200;
/** Document names in the one-line result. */
const NAMED_DOCUMENTS = 3;

function clip(text: string, max = SNIPPET_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * A Retrieval call's outcome for the run's events: how many chunks, from which documents, how they
 * start. A search of memories (whose hits are not references) is counted only.
 */
export function summariseRetrieval(out: RetrievalOutput): { result: string; retrieved?: RetrievedSummary } {
  if (!Object.keys(out.reference.chunks).length && out.json.length) return { result: `${out.json.length} memor${out.json.length === 1 ? 'y' : 'ies'}` };
  const chunks = Object.values(out.reference.chunks).map((c) => ({
    id: String(c.id ?? ''),
    document_id: String(c.document_id ?? ''),
    document_name: String(c.document_name ?? ''),
    content: clip(String(c.content ?? '')),
  }));
  const documents = [...new Set(chunks.map((c) => c.document_name))];
  const named = documents.slice(0, NAMED_DOCUMENTS).join(', ') + (documents.length > NAMED_DOCUMENTS ? `, … (${documents.length} documents)` : '');
  const result = chunks.length ? `${chunks.length} chunk${chunks.length === 1 ? '' : 's'}: ${named}` : 'nothing found';
  return { result, retrieved: { total: chunks.length, chunks: chunks.slice(0, LISTED_CHUNKS) } };
}

/** Any other tool's text result, shortened for an event. */
export function summariseText(text: string): string {
  return clip(text);
}

/**
 * A tool call as a canvas event: `tool_started` / `tool_finished`, with RAGFlow's trace fields
 * (`component_id` of the Agent, `path` as RAGFlow names a tool component: `<agent>--><tool>`,
 * `tool_name`, `arguments`, `result`, `elapsed_time`) and Cairn's summary of the chunks found.
 */
export function toolRunEvent(agentId: string, e: ToolCallEvent, now = Date.now()): RunEvent {
  const { phase, via, ...call } = e;
  const createdAt = Math.floor(now / 1000);
  return {
    event: `tool_${phase}`,
    created_at: createdAt,
    data: { component_id: agentId, path: [agentId, ...via, e.tool_name].join('-->'), ...call, created_at: createdAt },
  };
}
