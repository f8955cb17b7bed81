import type { ChunkIndex, IndexedChunk } from '../../index/chunks/chunk-index.js';
import type { MetaStore } from '../../store/index.js';
import type { DatasetRow } from '../../store/datasets.js';
import type { RaptorScope } from './settings.js';

/** One RAPTOR tree's leaves: the chunks of a document (scope file) or of the whole dataset (scope dataset). */
export interface SourceGroup {
  /** The document the tree's summaries belong to; for scope dataset, the dataset's id (no real document). */
  documentId: string;
  /** For scope dataset, the dataset's name. */
  documentName: string;
  texts: string[];
  vectors: number[][];
}

const PAGE = 500;

/** Documents of rows rather than prose: summarising clusters of rows says nothing (auto_disable_for_structured_data). */
const STRUCTURED_SUFFIXES = new Set(['csv', 'tsv', 'xls', 'xlsx', 'ods']);

export function isStructured(doc: { suffix: string; chunk_method: string }): boolean {
  return doc.chunk_method === 'table' || STRUCTURED_SUFFIXES.has(doc.suffix.toLowerCase());
}

/**
 * The leaves of the dataset's RAPTOR trees: the available, non-empty, embedded chunks of its parsed (DONE)
 * documents (spreadsheets and tables left out when the settings say so), RAPTOR summaries excluded, in a fixed order (documents by creation, chunks in reading
 * order) so that the same chunks always cluster the same way. Vectors of another dimension than most
 * (chunks embedded before an embedding-model change) are left out: they cannot be compared.
 */
export async function collectSources(
  deps: { store: MetaStore; index: ChunkIndex },
  dataset: Pick<DatasetRow, 'id' | 'name'>,
  settings: { scope: RaptorScope; skipStructured: boolean },
  onPage: () => void = () => {},
): Promise<SourceGroup[]> {
  const { scope } = settings;
  const documents = (await deps.store.documents.listByDataset(dataset.id))
    .filter((d) => d.run === 'DONE' && !(settings.skipStructured && isStructured(d)))
    .sort((a, b) => a.create_time - b.create_time || a.id.localeCompare(b.id));
  const perDocument: { id: string; name: string; chunks: IndexedChunk[] }[] = [];
  for (const doc of documents) {
    const chunks: IndexedChunk[] = [];
    for (let page = 1; ; page++) {
      const { chunks: found } = await deps.index.list(doc.id, { page, pageSize: PAGE });
      onPage();
      chunks.push(...found.filter((c) => c.available && !c.raptor_layer && c.content.trim() && c.vector.length > 0));
      if (found.length < PAGE) break;
    }
    perDocument.push({ id: doc.id, name: doc.name, chunks });
  }
  const dimension = commonest(perDocument.flatMap((d) => d.chunks.map((c) => c.vector.length)));
  const group = (documentId: string, documentName: string, chunks: IndexedChunk[]): SourceGroup => {
    const kept = chunks.filter((c) => c.vector.length === dimension);
    return { documentId, documentName, texts: kept.map((c) => c.content), vectors: kept.map((c) => c.vector) };
  };
  if (scope === 'dataset') return [group(dataset.id, dataset.name, perDocument.flatMap((d) => d.chunks))];
  return perDocument.map((d) => group(d.id, d.name, d.chunks));
}

function commonest(values: number[]): number {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best = 0;
  let bestCount = 0;
  for (const [v, n] of counts) if (n > bestCount || (n === bestCount && v < best)) [best, bestCount] = [v, n];
  return best;
}
