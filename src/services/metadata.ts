import { sql } from 'kysely';
import type { MetaStore } from '../store/index.js';
import type { ChunkIndex, IndexedChunk } from '../index/chunks/chunk-index.js';
import type { Principal } from './auth.js';
import type { DatasetService } from './datasets.js';
import { badRequest } from '../errors.js';
import { nowMs } from '../time.js';
import { allowedDocumentIds, METADATA_OPERATORS, type MetadataCondition } from '../retrieval/metadata.js';

/** RAGFlow's AutoMetadataConfig, stored per dataset (datasets.metadata_config). */
export interface MetadataConfig {
  metadata: { key: string; type?: string; description?: string; enum?: unknown[] }[];
  built_in_metadata?: unknown[];
  [k: string]: unknown;
}

export interface MetadataBatchUpdate {
  selector?: { document_ids?: string[]; metadata_condition?: MetadataCondition | null };
  updates?: { key?: string; value?: unknown; match?: unknown }[];
  deletes?: { key?: string; value?: unknown }[];
}

const TIME_RE = /^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?/;

/** RAGFlow's value-type inference for the summary: list, number, time or string. */
function valueType(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string' && TIME_RE.test(v.trim())) return 'time';
  return 'string';
}

function flat(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [v];
}

function isBlank(v: unknown): boolean {
  return v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
}

/** Query values given as `a,b` and/or repeated. */
export function idList(raw: unknown): string[] {
  const parts = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).flatMap((x) => String(x).split(','));
  return [...new Set(parts.map((s) => s.trim()).filter(Boolean))];
}

/** Dataset metadata (documents' meta_fields) and chunk tags (tag_kwd), RAGFlow's metadata and tag routes. */
export class MetadataService {
  constructor(
    private readonly store: MetaStore,
    private readonly datasets: DatasetService,
    private readonly index: ChunkIndex,
  ) {}

  /** `{key: {type, values: [[value, count], ...]}}`, values by document count, most first. */
  async summary(p: Principal, datasetId: string, docIds: string[]) {
    const ds = await this.datasets.get(p, datasetId);
    let rows = await this.store.documents.metaFields([ds.id]);
    if (docIds.length) rows = rows.filter((r) => docIds.includes(r.document_id));
    const counts = new Map<string, Map<string, number>>();
    const types = new Map<string, Map<string, number>>();
    for (const r of rows) {
      for (const [k, v] of Object.entries(r.meta_fields ?? {})) {
        const t = types.get(k) ?? new Map<string, number>();
        t.set(valueType(v), (t.get(valueType(v)) ?? 0) + 1);
        types.set(k, t);
        for (const item of flat(v)) {
          if (isBlank(item)) continue;
          const c = counts.get(k) ?? new Map<string, number>();
          c.set(String(item), (c.get(String(item)) ?? 0) + 1);
          counts.set(k, c);
        }
      }
    }
    const summary: Record<string, { type: string; values: [string, number][] }> = {};
    for (const [k, c] of counts) {
      const t = [...(types.get(k) ?? new Map()).entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'string';
      summary[k] = { type: t, values: [...c.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)) };
    }
    return { summary };
  }

  private async datasetIdsParam(p: Principal, raw: unknown): Promise<string[]> {
    const ids = idList(raw);
    if (ids.length === 0) throw badRequest('Lack of dataset_ids in query parameters');
    for (const id of ids) await this.datasets.get(p, id);
    return ids;
  }

  /** `{key: {value: [document_id, ...]}}` over the given datasets (RAGFlow's flattened metadata). */
  async flattened(p: Principal, rawIds: unknown) {
    const ids = await this.datasetIdsParam(p, rawIds);
    const out: Record<string, Record<string, string[]>> = {};
    for (const r of await this.store.documents.metaFields(ids)) {
      for (const [k, v] of Object.entries(r.meta_fields ?? {})) {
        for (const item of flat(v)) {
          if (isBlank(item)) continue;
          const byValue = (out[k] ??= {});
          (byValue[String(item)] ??= []).push(r.document_id);
        }
      }
    }
    return out;
  }

  /** Batch update of documents' meta_fields chosen by ids and/or a metadata condition. */
  async batchUpdate(p: Principal, datasetId: string, body: MetadataBatchUpdate) {
    const ds = await this.datasets.get(p, datasetId);
    const updates = body.updates ?? [];
    const deletes = body.deletes ?? [];
    for (const u of updates) {
      if (!u || typeof u.key !== 'string' || !u.key || !('value' in u)) throw badRequest('Each update requires key and value.');
    }
    for (const d of deletes) if (!d || typeof d.key !== 'string' || !d.key) throw badRequest('Each delete requires key.');
    const selector = body.selector ?? {};
    const docIds = [...new Set(selector.document_ids ?? [])];
    const all = await this.store.documents.metaFields([ds.id]);
    const byId = new Map(all.map((r) => [r.document_id, r.meta_fields ?? {}]));
    const foreign = docIds.filter((id) => !byId.has(id));
    if (foreign.length) throw badRequest(`These documents do not belong to dataset ${ds.id}: ${foreign.join(', ')}`);
    let target = new Set(docIds);
    const cond = selector.metadata_condition;
    if (cond && typeof cond === 'object') {
      const conditions = Array.isArray(cond.conditions) ? cond.conditions : [];
      for (const c of conditions) {
        if (!METADATA_OPERATORS.includes(c?.comparison_operator)) throw badRequest(`Invalid comparison_operator: ${String(c?.comparison_operator)}`);
      }
      const allowed = new Set(allowedDocumentIds(all, { logic: cond.logic, conditions }));
      target = docIds.length ? new Set(docIds.filter((id) => allowed.has(id))) : allowed;
      if (conditions.length && target.size === 0) return { updated: 0, matched_docs: 0 };
    }
    let updated = 0;
    const now = nowMs();
    for (const id of target) {
      const before = byId.get(id)!;
      const meta: Record<string, unknown> = structuredClone(before);
      for (const u of updates) {
        const cur = meta[u.key!];
        if (u.match !== undefined && Array.isArray(cur)) {
          // Replace one value of a list field.
          meta[u.key!] = cur.map((x) => (String(x) === String(u.match) ? u.value : x));
        } else if (u.match !== undefined && cur !== undefined && String(cur) !== String(u.match)) {
          continue;
        } else {
          meta[u.key!] = u.value;
        }
      }
      for (const d of deletes) {
        const cur = meta[d.key!];
        if (d.value !== undefined && Array.isArray(cur)) meta[d.key!] = cur.filter((x) => String(x) !== String(d.value));
        else if (d.value === undefined || String(cur) === String(d.value)) delete meta[d.key!];
      }
      if (JSON.stringify(meta) === JSON.stringify(before)) continue;
      await this.store.documents.update(id, { meta_fields: JSON.stringify(meta), update_time: now });
      updated++;
    }
    return { updated, matched_docs: target.size };
  }

  async getConfig(p: Principal, datasetId: string): Promise<MetadataConfig> {
    const ds = await this.datasets.get(p, datasetId);
    const row = await sql<{ metadata_config: string | null }>`select metadata_config from datasets where id = ${ds.id}`.execute(this.store.db.kysely);
    const raw = row.rows[0]?.metadata_config;
    return raw ? (JSON.parse(raw) as MetadataConfig) : { metadata: [], built_in_metadata: [] };
  }

  async putConfig(p: Principal, datasetId: string, config: MetadataConfig): Promise<MetadataConfig> {
    const ds = await this.datasets.get(p, datasetId);
    const value = { built_in_metadata: [], ...config };
    await sql`update datasets set metadata_config = ${JSON.stringify(value)}, update_time = ${nowMs()} where id = ${ds.id}`.execute(this.store.db.kysely);
    return value;
  }

  /** Every chunk of the datasets (page by page through each document). */
  private async chunksOf(datasetIds: string[]): Promise<IndexedChunk[]> {
    const out: IndexedChunk[] = [];
    for (const dsId of datasetIds) {
      for (const doc of await this.store.documents.listByDataset(dsId)) {
        for (let page = 1; ; page++) {
          const { chunks } = await this.index.list(doc.id, { page, pageSize: 1000 });
          out.push(...chunks);
          if (chunks.length < 1000) break;
        }
      }
    }
    return out;
  }

  /** `[[tag, count], ...]`: chunk counts per tag_kwd value, most first (RAGFlow's tag aggregation). */
  private async tagCounts(datasetIds: string[]): Promise<[string, number][]> {
    const counts = new Map<string, number>();
    for (const c of await this.chunksOf(datasetIds)) for (const t of new Set(c.tag_kwd ?? [])) counts.set(t, (counts.get(t) ?? 0) + 1);
    return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  }

  async listTags(p: Principal, datasetId: string) {
    const ds = await this.datasets.get(p, datasetId);
    return this.tagCounts([ds.id]);
  }

  async aggregateTags(p: Principal, rawIds: unknown) {
    return this.tagCounts(await this.datasetIdsParam(p, rawIds));
  }

  private async rewriteTags(datasetId: string, edit: (tags: string[]) => string[]) {
    for (const c of await this.chunksOf([datasetId])) {
      const before = c.tag_kwd ?? [];
      const after = [...new Set(edit(before))];
      if (after.length !== before.length || after.some((t, i) => t !== before[i])) await this.index.update(c.id, { tag_kwd: after });
    }
  }

  async removeTags(p: Principal, datasetId: string, tags: unknown) {
    const ds = await this.datasets.get(p, datasetId);
    if (tags === undefined || tags === null) throw badRequest('Lack of tags in request body');
    if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) throw badRequest('tags must be a list of strings');
    const drop = new Set(tags as string[]);
    await this.rewriteTags(ds.id, (cur) => cur.filter((t) => !drop.has(t)));
    return true;
  }

  async renameTag(p: Principal, datasetId: string, from: unknown, to: unknown) {
    const ds = await this.datasets.get(p, datasetId);
    const f = typeof from === 'string' ? from.trim() : '';
    const t = typeof to === 'string' ? to.trim() : '';
    if (!f || !t) throw badRequest('from_tag and to_tag must not be empty');
    await this.rewriteTags(ds.id, (cur) => cur.map((x) => (x === f ? t : x)));
    return true;
  }
}
