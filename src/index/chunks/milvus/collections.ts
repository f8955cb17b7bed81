/**
 * The Milvus collections of the chunk index (docs/scale-out.md "Milvus index"), and making sure they
 * exist, have the expected fields and are loaded. Every process may create them: the first wins, the
 * others find them.
 *
 * - `<prefix>chunks`: one row per chunk: filter and ordering fields, the BM25 text and its sparse vector,
 *   the lower-cased content for keyword filters, and the chunk record (JSON) for `get`;
 * - `<prefix>chunk_vectors_<dim>`: the dense vectors of one dimension (COSINE);
 * - `<prefix>chunk_parts`: the rest of records longer than one VARCHAR (64 KB).
 * `dataset_id` is the partition key of all three, so a search touches only its datasets' partitions.
 */
import { DataType, FunctionType, type FieldType, type MilvusClient } from '@zilliz/milvus2-sdk-node';
import { ANALYSIS_PROPERTY, ANALYSIS_VERSION, VARCHAR_MAX_BYTES } from './analysis.js';
import { call, MilvusIndexError } from './client.js';

/** Room for ids of up to 256 characters of any script (ids are 32 hex characters in Cairn). */
export const ID_BYTES = 1024;

/** Milvus's range of FLOAT_VECTOR dimensions. */
export const MIN_DIM = 2;
export const MAX_DIM = 32_768;

/** Refuses, naming `what`, a vector Milvus cannot store; an empty vector means "no vector" and passes. */
export function checkStorableDim(what: string, dim: number): void {
  if (dim !== 0 && (dim < MIN_DIM || dim > MAX_DIM)) {
    throw new Error(`${what}: Milvus stores vectors of ${MIN_DIM} to ${MAX_DIM} dimensions, this one has ${dim}`);
  }
}

/** A vector a collection holds and a cosine search can use: a storable dimension and a direction. */
export const searchableVector = (vector: number[]) => vector.length >= MIN_DIM && vector.length <= MAX_DIM && vector.some((x) => x !== 0);

/** Milvus ≥ 2.5 defaults; milvus-lite's k1 default is 1.5, so both are given. Same as FTS5's bm25(). */
export const BM25_PARAMS = { bm25_k1: 1.2, bm25_b: 0.75 };

export interface CollectionSpec {
  name: string;
  /** Shown by Milvus tools; default 'Cairn chunk index'. */
  description?: string;
  fields: FieldType[];
  functions?: { name: string; type: FunctionType; input_field_names: string[]; output_field_names: string[]; params: Record<string, unknown> }[];
  indexes: { field_name: string; index_type: string; metric_type: string; params?: Record<string, unknown> }[];
  /** Collection properties set at creation. */
  properties?: Record<string, string>;
}

/** The properties of a collection whose `text` analysis.ts writes: the analysis version (reanalysis.ts). */
export const analysedText = () => ({ [ANALYSIS_PROPERTY]: String(ANALYSIS_VERSION) });

export const varchar = (name: string, bytes: number, extra: Partial<FieldType> = {}): FieldType =>
  ({ name, data_type: DataType.VarChar, max_length: bytes, ...extra });

const keyFields = (): FieldType[] => [
  varchar('id', ID_BYTES, { is_primary_key: true }),
  varchar('dataset_id', ID_BYTES, { is_partition_key: true }),
  varchar('document_id', ID_BYTES),
];

export function chunksSpec(prefix: string): CollectionSpec {
  return {
    name: `${prefix}chunks`,
    fields: [
      ...keyFields(),
      varchar('document_name', VARCHAR_MAX_BYTES),
      { name: 'available', data_type: DataType.Bool },
      { name: 'dim', data_type: DataType.Int64 },
      { name: 'page_number', data_type: DataType.Double },
      { name: 'top', data_type: DataType.Double },
      { name: 'create_timestamp', data_type: DataType.Double },
      { name: 'ordinal', data_type: DataType.Int64 },
      varchar('text', VARCHAR_MAX_BYTES, { enable_analyzer: true, analyzer_params: { tokenizer: 'standard' } }),
      { name: 'sparse', data_type: DataType.SparseFloatVector },
      varchar('content_folded', VARCHAR_MAX_BYTES),
      { name: 'folded_whole', data_type: DataType.Bool },
      varchar('record', VARCHAR_MAX_BYTES),
      { name: 'record_parts', data_type: DataType.Int64 },
    ],
    functions: [{ name: 'text_bm25', type: FunctionType.BM25, input_field_names: ['text'], output_field_names: ['sparse'], params: {} }],
    // No inverted_index_algo: Milvus picks its default (DAAT_MAXSCORE); milvus-lite knows only TAAT_NAIVE.
    indexes: [{ field_name: 'sparse', index_type: 'SPARSE_INVERTED_INDEX', metric_type: 'BM25', params: BM25_PARAMS }],
    properties: analysedText(),
  };
}

export function vectorsName(prefix: string, dim: number): string {
  return `${prefix}chunk_vectors_${dim}`;
}

export function vectorsSpec(prefix: string, dim: number): CollectionSpec {
  return {
    name: vectorsName(prefix, dim),
    fields: [...keyFields(), { name: 'available', data_type: DataType.Bool }, { name: 'vector', data_type: DataType.FloatVector, dim }],
    indexes: [{ field_name: 'vector', index_type: 'AUTOINDEX', metric_type: 'COSINE' }],
  };
}

export function partsSpec(prefix: string): CollectionSpec {
  return {
    name: `${prefix}chunk_parts`,
    fields: [
      varchar('id', ID_BYTES + 16, { is_primary_key: true }),
      varchar('chunk_id', ID_BYTES),
      varchar('dataset_id', ID_BYTES, { is_partition_key: true }),
      varchar('document_id', ID_BYTES),
      { name: 'seq', data_type: DataType.Int64 },
      varchar('data', VARCHAR_MAX_BYTES),
      // Milvus wants a vector field in every collection; this one is never searched.
      { name: 'placeholder', data_type: DataType.FloatVector, dim: 2 },
    ],
    indexes: [{ field_name: 'placeholder', index_type: 'AUTOINDEX', metric_type: 'L2' }],
  };
}

/** The value of every part row's placeholder vector. */
export const PLACEHOLDER_VECTOR = [1, 0];

/** The dimension in a vectors collection name (`<prefix><stem><dim>`), or undefined for other names. */
export function dimOfVectorsName(prefix: string, name: string, stem = 'chunk_vectors_'): number | undefined {
  const match = name.startsWith(`${prefix}${stem}`) ? /^(\d+)$/.exec(name.slice(`${prefix}${stem}`.length)) : null;
  return match ? Number(match[1]) : undefined;
}

const typeName = (t: unknown) => (typeof t === 'number' ? DataType[t] : String(t));

/** How long loading a collection may take (a real Milvus loads existing segments into its query nodes). */
const LOAD_WAIT_MS = 300_000;

/** How long a failed create waits for a concurrent creator's collection to appear. */
const CONCURRENT_CREATE_WAIT_MS = 10_000;

/** Collections known to exist and be loaded, so each is checked once per process. */
export class CollectionCatalog {
  private readonly ready = new Map<string, Promise<void>>();

  constructor(private readonly client: MilvusClient, readonly prefix: string) {}

  /** Creates the collection if it is missing, checks its fields, builds missing indexes and loads it. */
  ensure(spec: CollectionSpec): Promise<void> {
    let pending = this.ready.get(spec.name);
    if (!pending) {
      pending = this.prepare(spec);
      this.ready.set(spec.name, pending);
      pending.catch(() => this.ready.delete(spec.name));
    }
    return pending;
  }

  /** Whether the collection exists (and is then made ready); only positive answers are remembered. */
  async exists(spec: CollectionSpec): Promise<boolean> {
    if (this.ready.has(spec.name)) return this.ready.get(spec.name)!.then(() => true);
    const { value } = await call(`hasCollection ${spec.name}`, () => this.client.hasCollection({ collection_name: spec.name }));
    if (!value) return false;
    await this.ensure(spec);
    return true;
  }

  /**
   * The dimensions that have a vectors collection (`<prefix><stem><dim>`) now (asked every time: another
   * process may add one).
   */
  async vectorDims(stem = 'chunk_vectors_'): Promise<number[]> {
    const { data } = await call('showCollections', () => this.client.showCollections());
    return data.flatMap((c) => dimOfVectorsName(this.prefix, c.name, stem) ?? []).sort((a, b) => a - b);
  }

  /** The collection's property `key`; undefined when it has none. */
  async property(collection_name: string, key: string): Promise<string | undefined> {
    const described = await call(`describeCollection ${collection_name}`, () => this.client.describeCollection({ collection_name }));
    const value = described.properties?.find((p) => p.key === key)?.value;
    return value === undefined ? undefined : String(value);
  }

  async setProperty(collection_name: string, key: string, value: string): Promise<void> {
    await call(`alterCollectionProperties ${collection_name}`, () => this.client.alterCollectionProperties({ collection_name, properties: { [key]: value } }));
  }

  private async prepare(spec: CollectionSpec): Promise<void> {
    const { client } = this;
    const collection_name = spec.name;
    const { value: found } = await call(`hasCollection ${collection_name}`, () => client.hasCollection({ collection_name }));
    if (!found) {
      await call(`createCollection ${collection_name}`, () => client.createCollection({
        collection_name,
        fields: spec.fields,
        functions: spec.functions,
        // A write is seen by the next read of every process: a chunk added is searchable at once.
        consistency_level: 'Strong',
        description: spec.description ?? 'Cairn chunk index',
        properties: spec.properties,
      })).catch(async (err) => {
        // Another process creating it at the same moment makes this call fail (milvus-lite: "File exists")
        // before its collection is listed: wait for it to appear rather than fail the start.
        if (!(await this.appears(collection_name, CONCURRENT_CREATE_WAIT_MS))) throw err;
        return {};
      });
    }
    await this.checkFields(spec);
    for (const index of spec.indexes) {
      const hasIndex = async () => Boolean((await client.describeIndex({ collection_name, field_name: index.field_name })).index_descriptions?.length);
      if (await hasIndex()) continue;
      await call(`createIndex ${collection_name}.${index.field_name}`, () => client.createIndex({ collection_name, ...index })).catch(async (err) => {
        // A concurrent creator built it first (milvus-lite: "index already exists").
        if (!(await hasIndex())) throw err;
        return {};
      });
    }
    await this.load(collection_name);
  }

  /**
   * Loads the collection and waits until it is loaded. Not the SDK's loadCollectionSync, which sleeps
   * 400 ms after every progress check, the last one included (0.4 s per collection even when loaded).
   */
  private async load(collection_name: string): Promise<void> {
    await call(`loadCollection ${collection_name}`, () => this.client.loadCollectionAsync({ collection_name }));
    const deadline = Date.now() + LOAD_WAIT_MS;
    for (let pause = 10; ; pause = Math.min(pause * 2, 400)) {
      const { progress } = await call(`getLoadingProgress ${collection_name}`, () => this.client.getLoadingProgress({ collection_name }));
      if (Number(progress) >= 100) return;
      if (Date.now() > deadline) throw new MilvusIndexError(`loadCollection ${collection_name}`, `not loaded after ${LOAD_WAIT_MS / 1000} s (${progress}%)`);
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  /** Polls until the collection exists, for at most `ms`. */
  private async appears(collection_name: string, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      const { value } = await this.client.hasCollection({ collection_name });
      if (value) return true;
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Refuses a collection of the same name made by something else (or an incompatible version). */
  private async checkFields(spec: CollectionSpec): Promise<void> {
    const described = await call(`describeCollection ${spec.name}`, () => this.client.describeCollection({ collection_name: spec.name }));
    const actual = new Map(described.schema.fields.map((f) => [f.name, f]));
    for (const field of spec.fields) {
      const found = actual.get(field.name);
      const wanted = typeName(field.data_type);
      const dim = (found?.type_params as { key: string; value: string }[] | undefined)?.find((p) => p.key === 'dim')?.value;
      const problem = !found ? 'has no field'
        : typeName(found.data_type) !== wanted ? `has another type (${typeName(found.data_type)}, not ${wanted}) for`
        : field.dim !== undefined && Number(dim) !== Number(field.dim) ? `has another dimension (${dim}) for`
        : undefined;
      if (problem) {
        throw new MilvusIndexError('open', `collection ${spec.name} ${problem} "${field.name}": it was not made by this version of Cairn (drop it, or use another database)`);
      }
    }
  }
}
