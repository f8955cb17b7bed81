import { createHash } from 'node:crypto';
import type { MetaStore } from '../store/index.js';
import type { ChunkIndex, ChunkPatch, IndexedChunk } from '../index/chunks/chunk-index.js';
import type { BlobStore } from '../blobs/types.js';
import type { Position } from '../parsing/types.js';
import type { Principal } from './auth.js';
import type { DocumentService } from './documents.js';
import type { ModelClients } from './model-clients.js';
import type { DocumentRow } from '../store/documents.js';
import type { DatasetRow } from '../store/datasets.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { countTokens } from '../text/tokens.js';
import { summarize } from '../text/summary.js';
import { nowMs, toDateTime } from '../time.js';
import { chunkImageKey } from './blob-keys.js';
import { chunkVectors } from './chunk-vectors.js';
import { decodeImage, imageContentType, stackVertically } from './images.js';
import { isId } from '../ids.js';
import { raptorMark } from '../enrichment/raptor/mark.js';

/** Spec "Errors": 1001 Invalid Chunk ID (HTTP 404), 1002 Chunk Update Failed (HTTP 400). */
export const invalidChunkId = (id: string) => new ApiError(404, `Invalid Chunk ID: ${id}`, 1001);
export const chunkUpdateFailed = (reason: string) => new ApiError(400, `Chunk Update Failed: ${reason}`, 1002);

export interface AddChunkInput {
  content: string;
  important_keywords?: string[];
  questions?: string[];
  tag_kwd?: string[];
  image_base64?: string | null;
}

export interface UpdateChunkInput {
  content?: string;
  important_keywords?: string[];
  questions?: string[];
  tag_kwd?: string[];
  positions?: Position[];
  available?: boolean;
  image_base64?: string;
}

export class ChunkService {
  constructor(
    private readonly store: MetaStore,
    private readonly documents: DocumentService,
    private readonly index: ChunkIndex,
    private readonly blobs: BlobStore,
    private readonly models: ModelClients,
  ) {}

  async list(p: Principal, datasetId: string, documentId: string, q: { keywords?: string; id?: string; page: number; page_size: number }) {
    const { doc } = await this.documents.get(p, datasetId, documentId);
    const { total, chunks } = await this.index.list(doc.id, { keywords: q.keywords || undefined, id: q.id || undefined, page: q.page, pageSize: q.page_size });
    if (q.id && total === 0) throw invalidChunkId(q.id);
    return { total, chunks: chunks.map(chunkView), doc: this.documents.view(doc) };
  }

  /** One chunk of the document, in the list route's shape; 1001 when it is not a chunk of the document. */
  async get(p: Principal, datasetId: string, documentId: string, chunkId: string) {
    const { doc } = await this.documents.get(p, datasetId, documentId);
    const chunk = await this.index.get(chunkId);
    if (!chunk || chunk.document_id !== doc.id) throw invalidChunkId(chunkId);
    return chunkView(chunk);
  }

  /** Adds a chunk, embedded and searchable at once. The same content again names the same chunk (RAGFlow's id). */
  async add(p: Principal, datasetId: string, documentId: string, input: AddChunkInput) {
    const { ds, doc } = await this.documents.get(p, datasetId, documentId);
    // Kept as given (a leading newline included), as RAGFlow stores it; only a blank content is refused.
    const content = input.content;
    if (!content.trim()) throw badRequest('`content` is required and must not be blank');
    const id = createHash('sha256').update(`${content}\u0000${doc.id}`).digest('hex').slice(0, 32);
    const existing = await this.index.get(id);
    const questions = cleanQuestions(input.questions ?? []);
    const [vector] = await chunkVectors(await this.models.embedding(ds.tenant_id, ds.embedding_model), doc.name, [{ content, questions }]);
    const now = nowMs();
    const chunk: IndexedChunk = {
      id,
      tenant_id: ds.tenant_id,
      dataset_id: ds.id,
      document_id: doc.id,
      document_name: doc.name,
      content,
      important_keywords: input.important_keywords ?? [],
      questions,
      tag_kwd: input.tag_kwd ?? [],
      image_id: existing?.image_id ?? '',
      positions: existing?.positions ?? [],
      available: true,
      create_time: toDateTime(now),
      create_timestamp: now / 1000,
      vector,
    };
    if (input.image_base64) chunk.image_id = await this.attachImage(ds, id, existing?.image_id ?? '', input.image_base64);
    await this.index.upsert([chunk]);
    if (!existing) await this.adjustCounts(doc, 1, countTokens(content));
    return { chunk: chunkView(chunk) };
  }

  async update(p: Principal, datasetId: string, documentId: string, chunkId: string, input: UpdateChunkInput): Promise<void> {
    const { ds, doc } = await this.documents.get(p, datasetId, documentId);
    const chunk = await this.index.get(chunkId);
    if (!chunk || chunk.document_id !== doc.id) throw invalidChunkId(chunkId);
    const patch: ChunkPatch = {};
    if (input.content !== undefined) {
      if (!input.content.trim()) throw chunkUpdateFailed('`content` must not be blank');
      patch.content = input.content;
    }
    if (input.important_keywords !== undefined) patch.important_keywords = input.important_keywords;
    if (input.questions !== undefined) patch.questions = cleanQuestions(input.questions);
    if (input.tag_kwd !== undefined) patch.tag_kwd = input.tag_kwd;
    if (input.positions !== undefined) patch.positions = input.positions;
    if (input.available !== undefined) patch.available = input.available;
    try {
      if (input.image_base64) patch.image_id = await this.attachImage(ds, chunk.id, chunk.image_id, input.image_base64);
      if (patch.content !== undefined || patch.questions !== undefined) {
        const model = await this.models.embedding(ds.tenant_id, ds.embedding_model);
        [patch.vector] = await chunkVectors(model, doc.name, [{ content: patch.content ?? chunk.content, questions: patch.questions ?? chunk.questions }]);
      }
    } catch (err) {
      throw chunkUpdateFailed((err as Error).message);
    }
    await this.index.update(chunk.id, patch);
    if (patch.content !== undefined) await this.adjustCounts(doc, 0, countTokens(patch.content) - countTokens(chunk.content));
  }

  /** The shared delete rule, with 1001 for ids that are not chunks of the document (nothing is deleted then). */
  /** Partial: valid ids go, unknown or duplicate ones are reported in `errors`; 1001 naming them all when none goes. */
  async delete(
    p: Principal, datasetId: string, documentId: string, ids: string[] | null | undefined, deleteAll: boolean,
  ): Promise<{ deleted: number; success_count: number; errors: string[] }> {
    const { doc } = await this.documents.get(p, datasetId, documentId);
    let targets: IndexedChunk[];
    const errors: string[] = [];
    if (ids && ids.length > 0) {
      const unique = [...new Set(ids)];
      targets = (await this.index.getMany(unique)).filter((c) => c.document_id === doc.id);
      const missing = unique.filter((id) => !targets.some((c) => c.id === id));
      if (missing.length === unique.length) throw invalidChunkId(summarize(missing, ', '));
      errors.push(...missing.map((id) => invalidChunkId(id).message));
      errors.push(...[...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))].map((id) => `Duplicate chunk ids: ${id}`));
    } else if (deleteAll) {
      targets = (await this.index.list(doc.id, { page: 1, pageSize: Number.MAX_SAFE_INTEGER })).chunks;
    } else {
      return { deleted: 0, success_count: 0, errors };
    }
    const deleted = await this.index.deleteChunks(targets.map((c) => c.id));
    await this.adjustCounts(doc, -deleted, -targets.reduce((n, c) => n + countTokens(c.content), 0));
    return { deleted, success_count: deleted, errors };
  }

  /**
   * The image behind an image id `{dataset_id}-{object_key}` (RAGFlow splits on the first hyphen only),
   * for a caller who may see the dataset: a chunk's image (`image_id` of chunks, `img_id` of chat
   * references), or, for the id of an image document of that dataset, its original file.
   */
  async image(p: Principal, imageId: string): Promise<{ bytes: Buffer; contentType: string }> {
    const cut = imageId.indexOf('-');
    const datasetId = cut > 0 ? imageId.slice(0, cut) : '';
    const key = cut > 0 ? imageId.slice(cut + 1) : '';
    if (!datasetId || !key) throw notFound(`Image '${imageId}' not found: an image id is {dataset_id}-{chunk_id}, as chunks' image_id`);
    const ds = await this.documents.datasetFor(p, datasetId);
    const missing = notFound(`Image '${imageId}' not found: dataset ${ds.id} has no chunk image or image document with id '${key}'`);
    // Chunk and document ids are 32 hex characters; anything else (a path, `..`) names no stored image.
    if (!isId(key)) throw missing;
    const stored = await this.blobs.get(chunkImageKey(ds.id, key));
    if (stored) return { bytes: stored, contentType: imageContentType(stored) ?? 'application/octet-stream' };
    const doc = await this.store.documents.byId(key);
    if (!doc || doc.dataset_id !== ds.id) throw missing;
    const file = await this.blobs.get(doc.location);
    const type = file && imageContentType(file);
    if (!file || !type) throw notFound(`Image '${imageId}' not found: document ${doc.name} ${file ? 'is not an image' : 'is missing from storage'}`);
    return { bytes: file, contentType: type };
  }

  /** A new image goes below the chunk's existing one. */
  private async attachImage(ds: DatasetRow, chunkId: string, currentImageId: string, base64: string): Promise<string> {
    const incoming = await decodeImage(base64);
    const key = chunkImageKey(ds.id, chunkId);
    const current = currentImageId ? await this.blobs.get(key) : undefined;
    await this.blobs.put(key, current ? await stackVertically(current, incoming) : incoming);
    return `${ds.id}-${chunkId}`;
  }

  private async adjustCounts(doc: DocumentRow, chunks: number, tokens: number): Promise<void> {
    const fresh = (await this.store.documents.byId(doc.id)) ?? doc;
    await this.store.documents.update(doc.id, {
      chunk_count: Math.max(0, fresh.chunk_count + chunks),
      token_count: Math.max(0, fresh.token_count + tokens),
      update_time: nowMs(),
    });
  }
}

/** RAGFlow's rule for questions: each is trimmed and blank ones are dropped. */
function cleanQuestions(questions: string[]): string[] {
  return questions.map((q) => String(q).trim()).filter((q) => q.length > 0);
}

/**
 * The spec's Chunk fields, plus RAGFlow's aliases: `content_with_weight` and `doc_id` are the names its
 * console's chunk routes answer with, which clients written against them read.
 */
export function chunkView(c: IndexedChunk) {
  return {
    id: c.id,
    content: c.content,
    content_with_weight: c.content,
    important_keywords: c.important_keywords,
    tag_kwd: c.tag_kwd,
    questions: c.questions,
    image_id: c.image_id,
    create_time: c.create_time,
    create_timestamp: c.create_timestamp,
    dataset_id: c.dataset_id,
    document_id: c.document_id,
    doc_id: c.document_id,
    document_name: c.document_name,
    document_keyword: c.document_name,
    docnm_kwd: c.document_name,
    available: c.available,
    positions: c.positions,
    ...raptorMark(c),
  };
}
