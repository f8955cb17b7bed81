import { useCallback, useEffect, useState } from 'react';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads `fn()` when `deps` change; `reload` runs it again. Stale answers are dropped. */
export function useLoad<T>(fn: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    fn(ctrl.signal).then(
      (data) => !ctrl.signal.aborted && setState({ data, loading: false }),
      (error: Error) => !ctrl.signal.aborted && error.name !== 'AbortError' && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => ctrl.abort();
    // `fn` is a new closure every render: the caller's `deps` say when it changed.
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/**
 * While `active`, reloads `loaded` `ms` after each of its loads finishes. Polling from the end of the
 * last answer (not on a fixed clock) means a slow answer is never cut short by the next poll's reload.
 */
export function usePolling(loaded: { loading: boolean; reload(): void }, ms: number, active: boolean) {
  const { loading, reload } = loaded;
  useEffect(() => {
    if (!active || loading) return;
    const t = setTimeout(reload, ms);
    return () => clearTimeout(t);
  }, [active, loading, reload, ms]);
}

/**
 * Runs an action, tracking busy state and its error: `run(async () => ...)` returns the action's value,
 * or undefined when it failed (the error is then in `error`).
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const run = useCallback(async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (err) {
      setError(err as Error);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}

/**
 * useAction for destructive steps: `confirmThenRun(question, fn)` asks first and, when confirmed, runs
 * `fn` as the action, then calls `after` (a list's reload) whether it succeeded or not.
 */
export function useConfirmedAction(after: () => void) {
  const action = useAction();
  const { run } = action;
  const confirmThenRun = useCallback(
    async (question: string, fn: () => Promise<unknown>) => {
      if (!confirm(question)) return;
      await run(fn);
      after();
    },
    [run, after],
  );
  return { ...action, confirmThenRun };
}

/** `value` once it has not changed for `ms`: search boxes ask the server once the typing pauses. */
export function useDebounced<T>(value: T, ms = 300): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}
