import { api } from '../api/http.js';
import type { Dataset } from '../api/types.js';
import { useLoad } from '../hooks.js';
import { CheckboxList } from './CheckboxList.js';
import { ErrorMessage, countOf } from './ui.js';

/** Checkboxes for the caller's datasets (the first 100, newest first). */
export function DatasetPicker({ value, onChange, legend = 'Datasets' }: { value: string[]; onChange: (ids: string[]) => void; legend?: string }) {
  const datasets = useLoad((signal) => api.get<Dataset[]>('/datasets', { page_size: 100 }, signal), []);
  const options = (datasets.data ?? []).map((d) => ({
    value: d.id,
    label: (
      <>
        {d.name} <span className="muted small">({countOf(d.chunk_count, 'chunk')})</span>
      </>
    ),
  }));
  return (
    <CheckboxList legend={legend} options={options} value={value} onChange={onChange}>
      <ErrorMessage error={datasets.error} />
      {datasets.data?.length === 0 && <p className="muted">No datasets yet.</p>}
    </CheckboxList>
  );
}
