import { api } from '../api/http.js';
import type { Dataset } from '../api/types.js';
import { useLoad } from '../hooks.js';
import { ErrorMessage, PageHeader, Tabs } from './ui.js';
import { useLocation } from '../router.js';

/** The dataset's name and its section tabs; loads the dataset for the pages below. */
export function useDataset(datasetId: string) {
  return useLoad((signal) => api.get<Dataset>(`/datasets/${datasetId}`, undefined, signal), [datasetId]);
}

export function DatasetHeader({ dataset, error }: { dataset: Dataset | undefined; error?: Error }) {
  const { path } = useLocation();
  const id = dataset?.id ?? path.split('/')[2];
  return (
    <>
      <PageHeader title={dataset?.name ?? 'Dataset'} back={{ to: '/datasets', label: 'Datasets' }} />
      <ErrorMessage error={error} />
      <Tabs
        current={path}
        items={[
          { to: `/datasets/${id}`, label: 'Documents' },
          { to: `/datasets/${id}/retrieval`, label: 'Retrieval test' },
          { to: `/datasets/${id}/settings`, label: 'Settings' },
        ]}
      />
    </>
  );
}
