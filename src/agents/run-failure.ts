/**
 * Why an agent turn failed, and whose fault it is: the one classification every failure of a run
 * carries from the component (or the interpreter) through the workflow to the HTTP answer.
 *
 * - `user`: caused by the turn's input or the canvas's configuration: a script error in CodeExec, a
 *   missing dataset, a bad variable reference, a tool's bad arguments, a model or service the canvas
 *   is configured to call that refused or timed out, a loop that never ends. The caller can act on it:
 *   HTTP / envelope 400, naming the component.
 * - `internal`: a fault of Cairn itself (a bug, its store failing, a worker lost): 500.
 *
 * PURE: used by workflow code.
 */

export type FailureKind = 'user' | 'internal';

/** The run's failure as the RUN_ERROR event carries it (and the stream's error frame shows it). */
export interface RunFailure {
  kind: FailureKind;
  message: string;
  /** The component that failed, when one did. */
  component_id?: string;
  /** Its display name on the canvas (the id when the canvas gives none). */
  component_name?: string;
  /** Its class: LLM, CodeExec, Iteration, … */
  component_type?: string;
}

/** The HTTP status (and envelope code) of a failure of this kind. */
export function failureStatus(kind: FailureKind | undefined): number {
  return kind === 'user' ? 400 : 500;
}

/** The component's part of a failure: what the error frame's `data` names. */
export function failedComponent(failure: RunFailure): { component_id: string; component_name: string; component_type: string } | undefined {
  if (!failure.component_id) return undefined;
  return { component_id: failure.component_id, component_name: failure.component_name ?? failure.component_id, component_type: failure.component_type ?? '' };
}

/**
 * Whether an error a component's code threw is a fault of Cairn's rather than of the canvas: a
 * programming error (TypeError, ReferenceError, RangeError from our own code; a user's script runs in a
 * child process and comes back as a message), or the store failing. Everything else a component reports
 * (a timeout, a provider's answer, a refused URL, a missing dataset) is the canvas's to fix.
 */
export function isInternalError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError) return true;
  const code = (err as { code?: unknown }).code;
  if (err.name === 'SqliteError' || (typeof code === 'string' && code.startsWith('SQLITE_'))) return true;
  // PostgreSQL driver errors carry a severity and a five-character SQLSTATE code.
  const severity = (err as { severity?: unknown }).severity;
  return typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** The message naming the component: its id, its type, and its display name when it has its own. */
export function componentFailureMessage(id: string, type: string, name: string, reason: string): string {
  const named = name && name !== id ? `, named '${name}'` : '';
  return `Component '${id}' (${type}${named}) failed: ${reason}`;
}
