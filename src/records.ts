/** A plain JSON object (not null, not an array): what a DSL, a model's JSON answer or a request field holds. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
