import { badRequest } from '../errors.js';
import { METADATA_OPERATORS, type MetadataCondition, type MetadataOperator } from '../retrieval/metadata.js';

/** RAGFlow's `meta_data_filter` of searches and search apps. */
export interface MetaDataFilter {
  method?: string;
  logic?: 'and' | 'or';
  manual?: { key: string; op: string; value?: unknown }[];
  [other: string]: unknown;
}

// RAGFlow's operator aliases (convert_conditions).
const ALIASES: Record<string, MetadataOperator> = { is: '=', 'not is': '≠' };

/**
 * The `metadata_condition` a `meta_data_filter` stands for. `manual` conditions are applied as given;
 * `auto` and `semi_auto` (conditions written by a chat model) are refused rather than ignored.
 */
export function manualCondition(filter: MetaDataFilter | null | undefined): MetadataCondition | undefined {
  if (!filter || filter.method === undefined || filter.method === 'disabled') return undefined;
  if (filter.method !== 'manual') {
    throw badRequest(`meta_data_filter.method '${String(filter.method)}' is not supported: Cairn applies 'manual' conditions (or use metadata_condition)`);
  }
  const logic = filter.logic ?? 'and';
  if (logic !== 'and' && logic !== 'or') throw badRequest("meta_data_filter.logic must be 'and' or 'or'");
  if (filter.manual !== undefined && !Array.isArray(filter.manual)) throw badRequest('meta_data_filter.manual must be a list of {key, op, value}');
  const conditions = (filter.manual ?? []).map((c, i) => {
    const op = ALIASES[c?.op] ?? c?.op;
    if (typeof c?.key !== 'string' || !c.key) throw badRequest(`meta_data_filter.manual[${i}].key must be a non-empty string`);
    if (!(METADATA_OPERATORS as readonly string[]).includes(op)) throw badRequest(`meta_data_filter.manual[${i}].op '${String(c.op)}' is not one of ${METADATA_OPERATORS.join(', ')}`);
    return { name: c.key, comparison_operator: op as MetadataOperator, value: c.value };
  });
  return conditions.length ? { logic, conditions } : undefined;
}
