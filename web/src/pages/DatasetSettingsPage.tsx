import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import { chunkMethodOptions, DATASET_CHUNK_METHODS, PERMISSION_OPTIONS, type Dataset } from '../api/types.js';
import { DatasetHeader, useDataset } from '../components/DatasetTabs.js';
import { IngestionChoice } from '../components/IngestionChoice.js';
import { ModelSelect } from '../components/ModelSelect.js';
import { ParserConfigForm } from '../components/ParserConfigForm.js';
import { ErrorMessage, Loading, Notice, SelectField, SubmitButton, TextArea, TextField } from '../components/ui.js';
import { useAction } from '../hooks.js';
import { navigate } from '../router.js';

export function DatasetSettingsPage({ datasetId }: { datasetId: string }) {
  const dataset = useDataset(datasetId);
  return (
    <>
      <DatasetHeader dataset={dataset.data} error={dataset.error} />
      {dataset.data ? <SettingsForm dataset={dataset.data} onSaved={dataset.reload} /> : !dataset.error && <Loading />}
    </>
  );
}

function SettingsForm({ dataset, onSaved }: { dataset: Dataset; onSaved: () => void }) {
  const [form, setForm] = useState(() => formOf(dataset));
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const del = useAction();
  useEffect(() => {
    setForm(formOf(dataset));
  }, [dataset]);
  const set = <K extends keyof ReturnType<typeof formOf>>(key: K, value: ReturnType<typeof formOf>[K]) => {
    setSaved(false);
    setForm((f) => ({ ...f, [key]: value }));
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const body: Record<string, unknown> = {
      name: form.name,
      description: form.description || null,
      permission: form.permission,
      pagerank: form.pagerank,
      // A chunk method sent takes the dataset off its pipeline: a pipeline dataset keeps it unless another mode is chosen.
      ...(form.use_pipeline
        ? { parse_type: dataset.parse_type ?? 1, pipeline_id: form.pipeline_id }
        : { chunk_method: form.chunk_method, parser_config: form.parser_config }),
    };
    if (form.embedding_model !== dataset.embedding_model) body.embedding_model = form.embedding_model;
    const ok = await save.run(() => api.put(`/datasets/${dataset.id}`, body));
    if (ok !== undefined) {
      setSaved(true);
      onSaved();
    }
  };

  const remove = async () => {
    if (!confirm(`Delete the dataset "${dataset.name}" with all its documents and chunks?`)) return;
    const ok = await del.run(() => api.delete('/datasets', { ids: [dataset.id] }));
    if (ok !== undefined) navigate('/datasets');
  };

  return (
    <form className="settings" onSubmit={submit}>
      <TextField label="Name" required maxLength={128} value={form.name} onChange={(e) => set('name', e.target.value)} />
      <TextArea label="Description" rows={2} value={form.description} onChange={(e) => set('description', e.target.value)} />
      <ModelSelect
        type="embedding"
        label="Embedding model"
        value={form.embedding_model}
        disabled={dataset.chunk_count > 0}
        hint={dataset.chunk_count > 0 ? `Fixed while the dataset has chunks (${dataset.chunk_count}).` : undefined}
        onChange={(id) => set('embedding_model', id)}
      />
      <SelectField
        label="Permission"
        options={PERMISSION_OPTIONS}
        value={form.permission}
        onChange={(e) => set('permission', e.target.value as Dataset['permission'])}
      />
      <TextField
        label="Page rank"
        type="number"
        min={0}
        max={100}
        value={form.pagerank}
        hint="0–100: chunks of datasets with a higher rank come first in retrieval over several datasets."
        onChange={(e) => set('pagerank', Number(e.target.value))}
      />
      <IngestionChoice usePipeline={form.use_pipeline} onUsePipeline={(use) => set('use_pipeline', use)} pipelineId={form.pipeline_id} onPipeline={(id) => set('pipeline_id', id)}>
        <SelectField
          label="Chunk method"
          hint="Applies to documents uploaded from now on; parse a document again to re-chunk it."
          options={chunkMethodOptions([...DATASET_CHUNK_METHODS, 'tag'])}
          value={form.chunk_method}
          onChange={(e) => (set('chunk_method', e.target.value), set('parser_config', {}))}
        />
        <ParserConfigForm method={form.chunk_method} value={form.parser_config} onChange={(c) => set('parser_config', c)} />
      </IngestionChoice>
      <ErrorMessage error={save.error} />
      {saved && <Notice>Settings saved.</Notice>}
      <div className="form-actions">
        <button type="button" className="danger" onClick={remove} disabled={del.busy}>
          Delete dataset
        </button>
        <SubmitButton label="Save settings" busy={save.busy} />
      </div>
      <ErrorMessage error={del.error} />
    </form>
  );
}

function formOf(ds: Dataset) {
  return {
    name: ds.name,
    description: ds.description ?? '',
    embedding_model: ds.embedding_model,
    permission: ds.permission,
    pagerank: ds.pagerank,
    chunk_method: ds.chunk_method,
    parser_config: ds.parser_config,
    use_pipeline: !!ds.pipeline_id,
    pipeline_id: ds.pipeline_id ?? '',
  };
}
