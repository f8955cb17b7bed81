import { Reply } from './routes.js';
import { firstFew } from '../text/summary.js';

/**
 * A batch delete's answer (RAGFlow's rule): `whole` when every id went; otherwise code 0 with
 * `data: {success_count, errors}` (plus `extra` keys) and the message `Partially deleted {n} {noun} with {m} errors`.
 * `errors` lists the first few failures and then "… and N more" (the message has the full count).
 */
export function partialReply(
  result: { success_count: number; errors: string[] },
  noun: string,
  whole: unknown,
  extra: Record<string, unknown> = {},
): unknown {
  if (result.errors.length === 0) return whole;
  return new Reply(
    { ...extra, success_count: result.success_count, errors: firstFew(result.errors) },
    { message: `Partially deleted ${result.success_count} ${noun} with ${result.errors.length} errors` },
  );
}
