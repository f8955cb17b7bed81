import type { MetaStore } from '../store/index.js';
import type { Principal } from './auth.js';
import type { DatasetService } from './datasets.js';
import type { DocumentService } from './documents.js';
import { badRequest, notFound } from '../errors.js';
import { isRecord } from '../records.js';

export interface RerunInput {
  /** The ingestion log's id (`GET /datasets/{id}/ingestions`): `<document_id>-<run_seq>`. */
  id: string;
  dsl: unknown;
  component_id: string;
}

/** JSON with object keys sorted, so two DSLs compare by content, not by key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isRecord(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * RAGFlow's `POST /agents/rerun`: runs an ingestion pipeline again on the document of one of its logs,
 * from the component `component_id` on, the chunks of the earlier run removed first. In Cairn this is
 * `POST /documents/ingest` with `from_step` (the steps before reuse their stored outputs). The run uses
 * the pipeline as saved; RAGFlow reruns with the DSL sent, so a DSL whose components differ from the
 * saved ones is refused rather than ignored.
 */
export class PipelineRerunService {
  constructor(
    private readonly store: MetaStore,
    private readonly datasets: DatasetService,
    private readonly documents: Pick<DocumentService, 'ingest'>,
  ) {}

  async rerun(p: Principal, input: RerunInput): Promise<true> {
    const match = /^([A-Za-z0-9]+)-(\d+)$/.exec(input.id);
    const doc = match ? await this.store.documents.byId(match[1]!) : undefined;
    const dataset = doc && (await this.datasets.get(p, doc.dataset_id).catch(() => undefined));
    const logged = dataset && (await this.store.ingestionSteps.ofDataset(dataset.id, doc.id)).some((s) => s.run_seq === Number(match![2]));
    // A log of another tenant's document is as unknown as a missing one (RAGFlow's message for both).
    if (!doc || !dataset || !logged) throw notFound('Document not found.');
    if (doc.run === 'RUNNING') throw badRequest(`\`${doc.name}\` is processing...`);
    if (!isRecord(input.dsl) || !isRecord(input.dsl.components)) throw badRequest('`dsl` must be the pipeline\'s DSL, with its `components`');
    if (!input.dsl.components[input.component_id]) throw badRequest(`Component '${input.component_id}' is not in the DSL`);
    if (!dataset.pipeline_id) throw badRequest(`Dataset '${dataset.name}' ingests with the chunk method ${dataset.chunk_method}, not through a pipeline: nothing to rerun from a component`);
    const pipeline = await this.store.agents.byId(dataset.pipeline_id);
    const saved = pipeline ? (JSON.parse(pipeline.dsl) as { components?: unknown }).components : undefined;
    if (canonical(saved) !== canonical(input.dsl.components)) {
      throw badRequest(`The DSL differs from pipeline ${dataset.pipeline_id} as saved: save it first (PUT /api/v1/agents/${dataset.pipeline_id}), then rerun`);
    }
    await this.documents.ingest(p, { docIds: [doc.id], run: '1', delete: true, fromStep: input.component_id });
    return true;
  }
}
