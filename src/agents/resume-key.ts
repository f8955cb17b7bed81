import { createHash } from 'node:crypto';
import type { CanvasDsl, RunInputs } from './dsl.js';
import type { AgentMessage } from './io/session-turns.js';

/**
 * The id of the turn that answers a UserFillUp with `inputs`: derived from the paused turn's id and the
 * answer, so the same answer submitted twice names the same turn.
 *
 * - `answered: false`: the session is paused and this answer resumes it under `key`.
 * - `answered: true`: the session's latest turn is this very answer to the pause before it (a repeated
 *   submission that arrives after the first one ran): the caller gets that turn, nothing runs again.
 *
 * Undefined when the call carries no inputs or answers no pause. Only the latest pause counts: the same
 * answer twice in a row resumes once, even when the resumed turn paused again at another form.
 */
export function resumeKey(messages: AgentMessage[], canvas: CanvasDsl, inputs: RunInputs | undefined): { key: string; answered: boolean } | undefined {
  if (!inputs || !Object.keys(inputs).length) return undefined;
  const answers = messages.filter((m) => m.role === 'assistant');
  const last = answers.at(-1);
  if (!last) return undefined;
  const pauseBefore = answers.slice(0, -1).reverse().find((m) => m.status === 'paused');
  if (pauseBefore && answerKey(pauseBefore.id, inputs) === last.id) return { key: last.id, answered: true };
  if (canvas.paused !== true || last.status !== 'paused') return undefined;
  return { key: answerKey(last.id, inputs), answered: false };
}

function answerKey(pausedTurnId: string, inputs: RunInputs): string {
  return createHash('sha256').update(`${pausedTurnId}\n${canonicalJson(inputs)}`).digest('hex').slice(0, 32);
}

/** JSON with object keys sorted at every depth: the same answer gives the same text however its keys were ordered. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
