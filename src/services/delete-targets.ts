import { ApiError, badRequest } from '../errors.js';
import { summarize } from '../text/summary.js';

/**
 * The shared delete rule (spec "Endpoints"): the given ids (no duplicates; each must exist in scope,
 * else `check` throws), every object in scope with delete_all, or nothing at all.
 */
export async function deleteTargets(
  ids: string[] | null | undefined,
  deleteAll: boolean,
  check: (id: string) => Promise<unknown>,
  everything: () => Promise<string[]>,
): Promise<string[]> {
  if (ids && ids.length > 0) {
    const dup = ids.find((id, i) => ids.indexOf(id) !== i);
    if (dup) throw badRequest(`Duplicate ids: '${dup}'`);
    for (const id of ids) await check(id);
    return ids;
  }
  return deleteAll ? everything() : [];
}

/** What a batch delete did: how many went, and why each other id did not. */
export interface PartialDelete {
  success_count: number;
  errors: string[];
}

/**
 * The partial delete rule (RAGFlow's batch deletes of chats, sessions, documents, chunks): each given id
 * is checked on its own; a duplicate or an id that `check` refuses is reported in `errors` and the rest are
 * deleted. Only when none is left is it an error: the first refusal's status, naming the first few failures.
 */
export async function partialDeleteTargets(
  ids: string[] | null | undefined,
  deleteAll: boolean,
  check: (id: string) => Promise<unknown>,
  everything: () => Promise<string[]>,
): Promise<{ targets: string[]; errors: string[] }> {
  if (!ids || ids.length === 0) return { targets: deleteAll ? await everything() : [], errors: [] };
  const targets: string[] = [];
  const errors: string[] = [];
  const seen = new Set<string>();
  let first: ApiError | undefined;
  for (const id of ids) {
    if (seen.has(id)) {
      errors.push(`Duplicate ids: '${id}'`);
      continue;
    }
    seen.add(id);
    try {
      await check(id);
      targets.push(id);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      first ??= err;
      errors.push(err.message);
    }
  }
  if (targets.length === 0 && first) throw new ApiError(first.status, summarize(errors), first.code);
  return { targets, errors };
}
