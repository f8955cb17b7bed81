/**
 * Finds where a request schema lets a value grow without bound (issue 19): a string with no maxLength
 * (nor an enum, const, pattern or format that bounds it), a list with no maxItems, an integer without a
 * safe range on both sides, and schemas that take any value (`{}`, `true`) without those bounds.
 */

const COMPOSITES = ['anyOf', 'oneOf', 'allOf'] as const;

/** "path: problem" for every unbounded place in `schema`, named from `path`. */
export function unboundedFields(schema: unknown, path: string): string[] {
  const out: string[] = [];
  visit(schema, path, out);
  return out;
}

function visit(node: unknown, path: string, out: string[]): void {
  if (node === false) return;
  if (node === true) return void out.push(`${path}: any value, unbounded`);
  if (typeof node !== 'object' || node === null) return;
  const s = node as Record<string, unknown>;
  const composite = COMPOSITES.filter((k) => Array.isArray(s[k]));
  for (const k of composite) (s[k] as unknown[]).forEach((branch, i) => visit(branch, `${path}<${k} ${i}>`, out));

  // A schema without a type and without alternatives takes any value, strings and lists included.
  const types: unknown[] = s.type === undefined ? (composite.length || '$ref' in s || 'not' in s ? [] : ['string', 'array']) : [s.type].flat();
  if (!('enum' in s) && !('const' in s)) {
    if (types.includes('string') && s.maxLength === undefined && s.pattern === undefined && s.format === undefined) out.push(`${path}: string without maxLength`);
    if (types.includes('array') && s.maxItems === undefined) out.push(`${path}: list without maxItems`);
    if (types.includes('integer') && !(isSafe(s.minimum) && isSafe(s.maximum))) out.push(`${path}: integer without minimum and maximum`);
  }

  for (const [key, child] of Object.entries((s.properties as Record<string, unknown>) ?? {})) visit(child, `${path}.${key}`, out);
  for (const [pattern, child] of Object.entries((s.patternProperties as Record<string, unknown>) ?? {})) visit(child, `${path}.<${pattern}>`, out);
  if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${path}.*`, out);
  if (Array.isArray(s.items)) s.items.forEach((item, i) => visit(item, `${path}[${i}]`, out));
  else if (s.items !== undefined) visit(s.items, `${path}[]`, out);
  if (Array.isArray(s.prefixItems)) s.prefixItems.forEach((item, i) => visit(item, `${path}[${i}]`, out));
}

function isSafe(bound: unknown): boolean {
  return typeof bound === 'number' && Number.isSafeInteger(bound);
}

/** Every unbounded place of an OpenAPI document's request parameters and bodies. */
export function unboundedInOpenApi(doc: { paths: Record<string, Record<string, any>> }): string[] {
  const out: string[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) out.push(...unboundedFields(p.schema, `${where} ${p.in} ${p.name}`));
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, { schema: unknown }>)) {
        out.push(...unboundedFields(media.schema, `${where} body (${type})`));
      }
    }
  }
  return out;
}
