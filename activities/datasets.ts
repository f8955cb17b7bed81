import { heartbeat } from '@temporalio/activity';
import type { ActivityDeps } from './deps.js';
import { datasetBlobPrefix } from '../src/services/blob-keys.js';

export function datasetActivities({ store, index, blobs }: ActivityDeps) {
  return {
    /** Idempotent: removing what is already gone is a no-op. */
    async removeDatasetContent(datasetId: string): Promise<void> {
      const ds = await store.datasets.byIdAnyStatus(datasetId);
      if (ds && ds.status !== 'deleting') return; // never remove a live dataset
      heartbeat('chunks');
      await index.deleteByDataset(datasetId);
      heartbeat('files');
      await blobs.deletePrefix(datasetBlobPrefix(datasetId));
      heartbeat('documents');
      await store.ingestionSteps.deleteDataset(datasetId);
      await store.documents.deleteByDataset(datasetId);
      await store.datasets.remove(datasetId);
    },
  };
}
