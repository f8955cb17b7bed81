import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { removeDatasetContent } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export interface DeleteDatasetsInput {
  datasetIds: string[];
}

/**
 * Removes the content of datasets that the API already made invisible: parse runs, chunks, stored
 * files, document rows, then the dataset row. Each step is idempotent, so a retry or a restart resumes.
 */
export async function deleteDatasets(input: DeleteDatasetsInput): Promise<{ removed: number }> {
  for (const datasetId of input.datasetIds) {
    await removeDatasetContent(datasetId);
  }
  return { removed: input.datasetIds.length };
}
