/**
 * The Milvus collections of the memory index: the search copy of each message (docs/scale-out.md
 * "Memory messages"). The messages themselves live in the metadata database (src/store/milvus-memory-ledger.ts).
 *
 * - `<prefix>memory_messages`: one row per message: the filter fields and the analysed content (BM25
 *   function -> `sparse`);
 * - `<prefix>memory_vectors_<dim>`: the filter fields and the vector (COSINE) of each message with a
 *   non-zero vector of that dimension.
 * `message_id` (Int64) is the primary key, so writing a message again replaces its copy; `memory_id` is
 * the partition key (every search names its memories).
 */
import { DataType, FunctionType, type FieldType } from '@zilliz/milvus2-sdk-node';
import type { MemorySearchFilter } from './memory-index.js';
import { fitVarchar, stems, VARCHAR_MAX_BYTES } from '../chunks/milvus/analysis.js';
import { analysedText, BM25_PARAMS, ID_BYTES, varchar, type CollectionSpec } from '../chunks/milvus/collections.js';
import { and, equals, isIn } from '../chunks/milvus/expressions.js';
import { truncateUtf8 } from '../chunks/milvus/utf8.js';

export const VECTORS_STEM = 'memory_vectors_';

/**
 * Filter values (memory, agent, session, user ids) as Milvus keeps them: at most ID_BYTES, so an
 * unusually long id cannot make a write fail. A cut id may match more messages in Milvus; searches
 * re-check every hit against the ledger, so results stay exact.
 */
export const filterKey = (value: string) => truncateUtf8(value, ID_BYTES);

const filterFields = (): FieldType[] => [
  { name: 'message_id', data_type: DataType.Int64, is_primary_key: true },
  varchar('memory_id', ID_BYTES, { is_partition_key: true }),
  varchar('agent_id', ID_BYTES),
  varchar('session_id', ID_BYTES),
  varchar('user_id', ID_BYTES),
  /** Enabled and not forgotten. */
  { name: 'searchable', data_type: DataType.Bool },
];

export function memoryTextSpec(prefix: string): CollectionSpec {
  return {
    name: `${prefix}memory_messages`,
    description: 'Cairn memory index: message text',
    fields: [
      ...filterFields(),
      varchar('text', VARCHAR_MAX_BYTES, { enable_analyzer: true, analyzer_params: { tokenizer: 'standard' } }),
      { name: 'sparse', data_type: DataType.SparseFloatVector },
    ],
    functions: [{ name: 'text_bm25', type: FunctionType.BM25, input_field_names: ['text'], output_field_names: ['sparse'], params: {} }],
    indexes: [{ field_name: 'sparse', index_type: 'SPARSE_INVERTED_INDEX', metric_type: 'BM25', params: BM25_PARAMS }],
    properties: analysedText(),
  };
}

export function memoryVectorsSpec(prefix: string, dim: number): CollectionSpec {
  return {
    name: `${prefix}${VECTORS_STEM}${dim}`,
    description: 'Cairn memory index: message vectors',
    fields: [...filterFields(), { name: 'vector', data_type: DataType.FloatVector, dim }],
    indexes: [{ field_name: 'vector', index_type: 'AUTOINDEX', metric_type: 'COSINE' }],
  };
}

/** What the search copy of a message is made from (a ledger row). */
export interface SearchSource {
  message_id: number;
  memory_id: string;
  agent_id: string;
  session_id: string;
  user_id: string;
  content: string;
  status: number;
  forget_at: number | null;
}

function filterValues(m: SearchSource) {
  return {
    message_id: m.message_id,
    memory_id: filterKey(m.memory_id),
    agent_id: filterKey(m.agent_id),
    session_id: filterKey(m.session_id),
    user_id: filterKey(m.user_id),
    searchable: m.status === 1 && m.forget_at === null,
  };
}

/** The text row: the content analysed as the chunk index analyses chunks (analysis.ts), cut to one VARCHAR. */
export function textRow(m: SearchSource) {
  return { ...filterValues(m), text: fitVarchar(stems(m.content)) };
}

export function vectorRow(m: SearchSource, vector: number[]) {
  return { ...filterValues(m), vector };
}

/** The Milvus filter of a search: the memories' partitions, searchable copies, and the agent, session and user asked for. */
export function memoryFilter(filter: MemorySearchFilter): string {
  return and(
    isIn('memory_id', filter.memoryIds.map(filterKey)),
    'searchable == true',
    filter.agentId !== undefined && equals('agent_id', filterKey(filter.agentId)),
    filter.sessionId !== undefined && equals('session_id', filterKey(filter.sessionId)),
    filter.userId !== undefined && equals('user_id', filterKey(filter.userId)),
  );
}
