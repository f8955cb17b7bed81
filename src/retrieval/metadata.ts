/**
 * `metadata_condition` of the retrieval request: a filter over documents' `meta_fields`.
 *
 * Semantics (RAGFlow's, made precise):
 * - strings compare case-insensitively after trimming; when both sides parse as numbers they compare
 *   numerically, otherwise lexically (so ISO dates order correctly);
 * - a list-valued field matches when any element matches (`contains`, `start with`, `=`, `in`, `>`...),
 *   and the negated operators (`not contains`, `≠`, `not in`) are the exact negations of their positive forms;
 * - a missing or null field, "" and [] are empty: only `empty` and the negated operators match them;
 * - `in` / `not in` take a list, or a comma-separated string;
 * - logic `and` (default) needs every condition, `or` any; no conditions means no filtering.
 */

export const METADATA_OPERATORS = [
  'contains', 'not contains', 'start with', 'end with', 'empty', 'not empty',
  '=', '≠', '!=', '>', '<', '≥', '>=', '≤', '<=', 'in', 'not in',
] as const;

export type MetadataOperator = (typeof METADATA_OPERATORS)[number];

export interface MetadataFilterCondition {
  name: string;
  comparison_operator: MetadataOperator;
  value?: unknown;
}

export interface MetadataCondition {
  logic?: 'and' | 'or';
  conditions: MetadataFilterCondition[];
}

export interface DocumentMeta {
  document_id: string;
  meta_fields: Record<string, unknown> | null | undefined;
}

type Scalar = string | number | boolean;

function scalars(value: unknown): Scalar[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap(scalars);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return [value];
  return [JSON.stringify(value)];
}

function text(value: Scalar): string {
  return String(value).trim().toLowerCase();
}

function asNumber(value: Scalar): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const n = Number(value.trim());
  return Number.isFinite(n) ? n : undefined;
}

/** Numeric when both sides are numbers, otherwise lexical on the normalised strings. */
function compare(a: Scalar, b: Scalar): number {
  const x = asNumber(a);
  const y = asNumber(b);
  if (x !== undefined && y !== undefined) return x - y;
  const s = text(a);
  const t = text(b);
  return s < t ? -1 : s > t ? 1 : 0;
}

function isEmpty(values: Scalar[]): boolean {
  return values.every((v) => text(v) === '');
}

function listOperand(value: unknown): Scalar[] {
  return typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter(Boolean) : scalars(value);
}

function matchesCondition(fieldValue: unknown, condition: MetadataFilterCondition): boolean {
  const values = scalars(fieldValue);
  const operand = scalars(condition.value);
  const some = (test: (v: Scalar, o: Scalar) => boolean) => values.some((v) => operand.some((o) => test(v, o)));
  switch (condition.comparison_operator) {
    case 'contains': return some((v, o) => text(v).includes(text(o)));
    case 'not contains': return !some((v, o) => text(v).includes(text(o)));
    case 'start with': return some((v, o) => text(v).startsWith(text(o)));
    case 'end with': return some((v, o) => text(v).endsWith(text(o)));
    case 'empty': return isEmpty(values);
    case 'not empty': return !isEmpty(values);
    case '=': return some((v, o) => compare(v, o) === 0);
    case '≠': case '!=': return !some((v, o) => compare(v, o) === 0);
    case '>': return some((v, o) => compare(v, o) > 0);
    case '<': return some((v, o) => compare(v, o) < 0);
    case '≥': case '>=': return some((v, o) => compare(v, o) >= 0);
    case '≤': case '<=': return some((v, o) => compare(v, o) <= 0);
    case 'in': return values.some((v) => listOperand(condition.value).some((o) => compare(v, o) === 0));
    case 'not in': return !values.some((v) => listOperand(condition.value).some((o) => compare(v, o) === 0));
    default:
      throw new Error(`Unknown metadata comparison operator: ${String(condition.comparison_operator)}`);
  }
}

export function matchesMetadata(metaFields: Record<string, unknown> | null | undefined, condition: MetadataCondition): boolean {
  const fields = metaFields ?? {};
  const results = condition.conditions.map((c) => matchesCondition(Object.hasOwn(fields, c.name) ? fields[c.name] : undefined, c));
  if (results.length === 0) return true;
  return condition.logic === 'or' ? results.some(Boolean) : results.every(Boolean);
}

/** Ids of the documents whose metadata satisfies the condition. */
export function allowedDocumentIds(documents: DocumentMeta[], condition: MetadataCondition): string[] {
  return documents.filter((d) => matchesMetadata(d.meta_fields, condition)).map((d) => d.document_id);
}
