import type { ChatMessage } from '../models/types.js';
import { countTokens } from '../text/tokens.js';

/** Share of the model's context the prompt may fill (RAGFlow's message_fit_in uses the same margin). */
const CONTEXT_SHARE = 0.95;

/** The conversation so far as model messages: opening assistant messages (the prologue) and empty ones dropped. */
export function historyMessages(messages: { role: string; content: string }[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    if (out.length === 0 && m.role === 'assistant') continue;
    if (!m.content) continue;
    out.push({ role: m.role, content: m.content });
  }
  return out;
}

/**
 * The messages sent to the model: system prompt, as much recent history as fits in the model's
 * context, then the question. The oldest history goes first; system prompt and question are kept.
 */
export function modelMessages(system: string, history: ChatMessage[], question: string, contextTokens: number): ChatMessage[] {
  const limit = Math.floor(contextTokens * CONTEXT_SHARE);
  const head = system ? [{ role: 'system' as const, content: system }] : [];
  const turn = { role: 'user' as const, content: question };
  // A token is at least one UTF-8 byte: a prompt that fits in bytes needs no counting.
  const bytes = [system, question, ...history.map((m) => m.content)].reduce((n, t) => n + Buffer.byteLength(t), 0);
  if (bytes <= limit) return [...head, ...history, turn];

  const budget = limit - countTokens(system) - countTokens(question);
  const kept: ChatMessage[] = [];
  let used = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    used += countTokens(history[i]!.content);
    if (used > budget) break;
    kept.unshift(history[i]!);
  }
  // A history that starts with an answer has lost its question.
  while (kept[0]?.role === 'assistant') kept.shift();
  return [...head, ...kept, turn];
}
