import { createHash } from 'node:crypto';
import type { BlobStore } from '../../blobs/types.js';
import type { ChunkIndex, IndexedChunk } from '../../index/chunks/chunk-index.js';
import { datasetBlobPrefix } from '../../services/blob-keys.js';
import type { DatasetIndexData } from '../../services/dataset-indexes.js';
import { nowMs, toDateTime } from '../../time.js';

/** One summary of a RAPTOR tree, ready to index. */
export interface Summary {
  tenantId: string;
  datasetId: string;
  documentId: string;
  documentName: string;
  layer: number;
  content: string;
  vector: number[];
}

/** Same tree, level and text, same id: a re-run rewrites its summaries instead of adding copies. */
export function summaryChunkId(s: Pick<Summary, 'datasetId' | 'documentId' | 'layer' | 'content'>): string {
  return createHash('sha256').update(JSON.stringify(['raptor', s.datasetId, s.documentId, s.layer, s.content])).digest('hex').slice(0, 32);
}

export function summaryChunk(s: Summary, now = nowMs()): IndexedChunk {
  return {
    id: summaryChunkId(s),
    tenant_id: s.tenantId,
    dataset_id: s.datasetId,
    document_id: s.documentId,
    document_name: s.documentName,
    content: s.content,
    important_keywords: [],
    questions: [],
    tag_kwd: [],
    image_id: '',
    positions: [],
    available: true,
    create_time: toDateTime(now),
    create_timestamp: now / 1000,
    raptor_layer: s.layer,
    vector: s.vector,
  };
}

const UPSERT_BATCH = 256;

/**
 * A dataset's RAPTOR summaries in the chunk index. Their ids are listed in a manifest beside the
 * dataset's files (removed with the dataset), because summaries of scope file share their document
 * with its ordinary chunks: the manifest is how they are found again without reading every chunk.
 */
export class RaptorChunks implements DatasetIndexData {
  constructor(private readonly index: ChunkIndex, private readonly blobs: BlobStore) {}

  /**
   * Makes `chunks` the dataset's summaries: the previous ones not among them are deleted. Safe to repeat
   * after a crash at any point: the manifest lists old and new until the new set is complete.
   */
  async replace(datasetId: string, chunks: IndexedChunk[], onProgress: (written: number) => void = () => {}): Promise<void> {
    const previous = await this.ids(datasetId);
    const next = [...new Set(chunks.map((c) => c.id))];
    await this.writeManifest(datasetId, [...new Set([...previous, ...next])]);
    const keep = new Set(next);
    const stale = previous.filter((id) => !keep.has(id));
    if (stale.length) await this.index.deleteChunks(stale);
    for (let i = 0; i < chunks.length; i += UPSERT_BATCH) {
      await this.index.upsert(chunks.slice(i, i + UPSERT_BATCH));
      onProgress(Math.min(i + UPSERT_BATCH, chunks.length));
    }
    await this.writeManifest(datasetId, next);
  }

  /** Deletes every RAPTOR summary of the dataset (DELETE /datasets/{id}/raptor). */
  async remove(datasetId: string): Promise<void> {
    const ids = await this.ids(datasetId);
    if (ids.length) await this.index.deleteChunks(ids);
    // Summaries of scope dataset have the dataset's id as their document: any the manifest missed go too.
    await this.index.deleteByDocument(datasetId);
    await this.blobs.delete(manifestKey(datasetId));
  }

  /** Ids of the dataset's summaries (some may be gone already, with their document). */
  async ids(datasetId: string): Promise<string[]> {
    const bytes = await this.blobs.get(manifestKey(datasetId));
    return bytes ? (JSON.parse(bytes.toString('utf8')) as { ids: string[] }).ids : [];
  }

  private async writeManifest(datasetId: string, ids: string[]): Promise<void> {
    await this.blobs.put(manifestKey(datasetId), Buffer.from(JSON.stringify({ ids })));
  }
}

function manifestKey(datasetId: string): string {
  return `${datasetBlobPrefix(datasetId)}/raptor/summaries.json`;
}
