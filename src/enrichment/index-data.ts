import type { ActivityDeps } from '../../activities/deps.js';
import type { DatasetIndexType } from '../store/enrichment.js';
import type { DatasetIndexData } from '../services/dataset-indexes.js';
import { RaptorChunks } from './raptor/summary-chunks.js';

/** What each dataset index type built, removable by `DELETE /datasets/{id}/index?type=`. */
export function datasetIndexData(deps: Pick<ActivityDeps, 'store' | 'index' | 'blobs'>): Record<DatasetIndexType, DatasetIndexData> {
  return {
    raptor: new RaptorChunks(deps.index, deps.blobs),
    // The graph and every unpublished build of it (the model answers stay in the enrichment cache).
    graph: { remove: (datasetId) => deps.store.graph.remove(datasetId) },
  };
}
