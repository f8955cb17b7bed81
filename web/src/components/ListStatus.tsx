import type { Loaded } from '../hooks.js';
import { ErrorMessage, Loading } from './ui.js';

/**
 * What a list shows besides its items: an error (the list's own, or `error` from an action on it),
 * "Loading…" until the first answer, and `empty` when the answer has no items.
 */
export function ListStatus({ list, count, empty, error, onDismiss }: { list: Loaded<unknown>; count: number | undefined; empty: string; error?: Error; onDismiss?: () => void }) {
  return (
    <>
      <ErrorMessage error={list.error ?? error} onDismiss={!list.error && error ? onDismiss : undefined} />
      {!list.data && list.loading && <Loading />}
      {count === 0 && <p className="empty">{empty}</p>}
    </>
  );
}
