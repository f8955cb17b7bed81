import { api } from '../api/http.js';
import type { Dataset } from '../api/types.js';
import { useLoad } from '../hooks.js';
import { ErrorMessage } from './ui.js';

/** Checkboxes for the caller's datasets (the first 100, newest first). */
export function DatasetPicker({ value, onChange, legend = 'Datasets' }: { value: string[]; onChange: (ids: string[]) => void; legend?: string }) {
  const datasets = useLoad((signal) => api.get<Dataset[]>('/datasets', { page_size: 100 }, signal), []);
  const toggle = (id: string, on: boolean) => onChange(on ? [...value, id] : value.filter((x) => x !== id));
  return (
    <fieldset>
      <legend>{legend}</legend>
      <ErrorMessage error={datasets.error} />
      {datasets.data?.length === 0 && <p className="muted">No datasets yet.</p>}
      {datasets.data?.map((d) => (
        <div className="field checkbox" key={d.id}>
          <input id={`ds-${d.id}`} type="checkbox" checked={value.includes(d.id)} onChange={(e) => toggle(d.id, e.target.checked)} />
          <label htmlFor={`ds-${d.id}`}>
            {d.name} <span className="muted small">({d.chunk_count} chunks)</span>
          </label>
        </div>
      ))}
    </fieldset>
  );
}
