/**
 * Small hand-written doubles shared by the service specs: the store itself is the real MetaStore on a
 * fresh in-memory database of the profile; these stand in for the ports around it.
 */
import assert from 'node:assert/strict';
import type { MetaStore } from '../../../src/store/index.js';
import type { DocumentRow } from '../../../src/store/documents.js';
import type { DatasetCleanup } from '../../../src/services/datasets.js';
import { newId } from '../../../src/ids.js';

/** Dataset deletion's hand-offs, doing nothing (specs that do not delete datasets). */
export const noCleanup: DatasetCleanup = { startDeleteDatasets: async () => {}, cancelParse: async () => {}, cancelDatasetIndex: async () => {}, waitDatasetIndex: async () => {} };

/** A model catalog that accepts any embedding model as given, 'a@Builtin' by default. */
export const anyEmbeddingModel = { defaultEmbeddingModel: async () => 'a@Builtin', checkEmbeddingModel: async (_t: string, id: string) => id };

/** Rejects with an ApiError of this status (and envelope code) whose message matches. */
export async function refused(call: Promise<unknown>, status: number, message: RegExp): Promise<void> {
  await assert.rejects(call, (err: { status?: number; code?: number; message: string }) => {
    assert.equal(err.status, status, err.message);
    assert.equal(err.code, status, `envelope code of: ${err.message}`);
    assert.match(err.message, message);
    return true;
  });
}

/** A document row as a finished parse leaves it: `chunks` chunks, DONE (or what `fields` say). */
export async function storedDocument(store: MetaStore, ds: { id: string; tenant_id: string }, fields: Partial<DocumentRow> = {}): Promise<DocumentRow> {
  const id = fields.id ?? newId();
  const now = Date.now();
  const row: DocumentRow = {
    id,
    dataset_id: ds.id,
    pipeline_id: null,
    tenant_id: ds.tenant_id,
    name: `${id}.txt`,
    location: `${ds.id}/${id}`,
    size: 10,
    type: 'doc',
    suffix: 'txt',
    chunk_method: 'naive',
    parser_config: '{}',
    source_type: 'local',
    created_by: ds.tenant_id,
    run: 'DONE',
    progress: 1,
    progress_msg: '',
    process_begin_at: null,
    process_duration: 0,
    chunk_count: 3,
    token_count: 30,
    meta_fields: '{}',
    run_seq: 1,
    create_time: now,
    update_time: now,
    ...fields,
  };
  await store.documents.insert(row);
  return row;
}
