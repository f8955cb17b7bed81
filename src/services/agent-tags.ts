/**
 * RAGFlow's agent tags: one comma-separated string per agent. A tag holds no comma; tags are kept in
 * the order given, without case-insensitive duplicates, each at most TAG_MAX characters, the whole
 * string at most TAGS_MAX (extra tags are dropped, as RAGFlow does).
 */
const TAG_MAX = 64;
const TAGS_MAX = 1024;

/** The tags of a filter or a stored value: trimmed, empty ones dropped. */
export function splitTags(value: string): string[] {
  return value.split(',').map((t) => t.trim()).filter(Boolean);
}

/** The stored string for a list (commas inside a tag become spaces) or a comma-separated string. */
export function normalizeTags(input: string[] | string): string {
  const given = Array.isArray(input) ? input.map((t) => String(t).replace(/,/g, ' ').trim()).filter(Boolean) : splitTags(input);
  const seen = new Set<string>();
  const kept: string[] = [];
  let used = 0;
  for (const raw of given) {
    const tag = raw.slice(0, TAG_MAX);
    if (seen.has(tag.toLowerCase())) continue;
    const extra = tag.length + (kept.length ? 1 : 0);
    if (used + extra > TAGS_MAX) break;
    seen.add(tag.toLowerCase());
    kept.push(tag);
    used += extra;
  }
  return kept.join(',');
}

/** Tag usage over agents: `[{tag, count}]`, most used first, then by name. */
export function countTags(values: string[]): { tag: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const value of values) for (const tag of splitTags(value)) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  return [...counts].map(([tag, count]) => ({ tag, count })).sort((a, b) => b.count - a.count || (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
}
