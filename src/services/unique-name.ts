/**
 * RAGFlow's name de-duplication: `name`, else `name(1)`, `name(2)`... compared case-insensitively
 * against `takenKeys` (lowercased names). Undefined when the first free name would exceed `maxLength`
 * characters: the caller says the name already exists.
 */
export function firstFreeName(name: string, takenKeys: Set<string>, maxLength: number): string | undefined {
  if (!takenKeys.has(name.toLowerCase())) return name;
  for (let i = 1; ; i++) {
    const candidate = `${name}(${i})`;
    if (!takenKeys.has(candidate.toLowerCase())) return [...candidate].length > maxLength ? undefined : candidate;
  }
}
