import { badRequest } from '../errors.js';

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
