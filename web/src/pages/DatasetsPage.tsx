import { useState, type FormEvent } from 'react';
import { api, request } from '../api/http.js';
import { chunkMethodOptions, DATASET_CHUNK_METHODS, type Dataset } from '../api/types.js';
import { Dialog, ErrorMessage, Loading, PageHeader, Pager, SelectField, TextArea, TextField, formatTime } from '../components/ui.js';
import { useAction, useDebounced, useLoad } from '../hooks.js';
import { Link, navigate } from '../router.js';
import { useModels } from '../models.js';

const PAGE_SIZE = 30;

export function DatasetsPage() {
  const [page, setPage] = useState(1);
  const [keywords, setKeywords] = useState('');
  const searched = useDebounced(keywords);
  const [creating, setCreating] = useState(false);
  const list = useLoad(
    (signal) => request<Dataset[]>('GET', '/datasets', { query: { page, page_size: PAGE_SIZE, keywords: searched, include_parsing_status: true }, signal }),
    [page, searched],
  );
  const del = useAction();

  const remove = async (ds: Dataset) => {
    if (!confirm(`Delete the dataset "${ds.name}" with its ${ds.document_count} documents?`)) return;
    await del.run(() => api.delete('/datasets', { ids: [ds.id] }));
    list.reload();
  };

  return (
    <>
      <PageHeader title="Datasets">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          New dataset
        </button>
      </PageHeader>
      <div className="toolbar">
        <TextField label="Search datasets" type="search" value={keywords} onChange={(e) => (setKeywords(e.target.value), setPage(1))} />
      </div>
      <ErrorMessage error={list.error ?? del.error} />
      {!list.data && list.loading && <Loading />}
      {list.data && list.data.data.length === 0 && <p className="empty">No datasets yet. Create one, then upload documents into it.</p>}
      {list.data && list.data.data.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Datasets</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Documents</th>
                <th scope="col">Chunks</th>
                <th scope="col">Parsing</th>
                <th scope="col">Chunk method</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((ds) => (
                <tr key={ds.id}>
                  <td data-label="Name">
                    <Link to={`/datasets/${ds.id}`}>{ds.name}</Link>
                    {ds.description && <div className="muted small">{ds.description}</div>}
                  </td>
                  <td data-label="Documents">{ds.document_count}</td>
                  <td data-label="Chunks">{ds.chunk_count}</td>
                  <td data-label="Parsing">
                    <StatusCounts ds={ds} />
                  </td>
                  <td data-label="Chunk method">{ds.chunk_method}</td>
                  <td data-label="Updated">{formatTime(ds.update_time)}</td>
                  <td className="row-actions">
                    <Link to={`/datasets/${ds.id}/settings`} aria-label={`Settings of ${ds.name}`}>
                      Settings
                    </Link>
                    <button type="button" className="danger" onClick={() => remove(ds)} aria-label={`Delete ${ds.name}`} disabled={del.busy}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={Number(list.data.total ?? 0)} onPage={setPage} />}
      <CreateDatasetDialog open={creating} onClose={() => setCreating(false)} />
    </>
  );
}

function StatusCounts({ ds }: { ds: Dataset }) {
  const parts: [string, number | undefined, string][] = [
    ['done', ds.done_count, 'ok'],
    ['running', ds.running_count, 'busy'],
    ['not started', ds.unstart_count, ''],
    ['failed', ds.fail_count, 'bad'],
    ['cancelled', ds.cancel_count, ''],
  ];
  const shown = parts.filter(([, n]) => n);
  if (!shown.length) return <span className="muted">—</span>;
  return (
    <span className="counts">
      {shown.map(([label, n, cls]) => (
        <span key={label} className={`badge ${cls}`}>
          {n} {label}
        </span>
      ))}
    </span>
  );
}

function CreateDatasetDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [chunkMethod, setChunkMethod] = useState('naive');
  const [embedding, setEmbedding] = useState('');
  const [permission, setPermission] = useState('me');
  const models = useModels('embedding');
  const { busy, error, run } = useAction();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const ds = await run(() =>
      api.post<Dataset>('/datasets', { name, description: description || null, chunk_method: chunkMethod, permission, embedding_model: embedding || null }),
    );
    if (ds) navigate(`/datasets/${ds.id}`);
  };

  return (
    <Dialog title="New dataset" open={open} onClose={onClose}>
      <form onSubmit={submit}>
        <TextField label="Name" required maxLength={128} value={name} onChange={(e) => setName(e.target.value)} autoFocus />
        <TextArea label="Description" rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
        <SelectField label="Chunk method" options={chunkMethodOptions(DATASET_CHUNK_METHODS)} value={chunkMethod} onChange={(e) => setChunkMethod(e.target.value)} />
        <SelectField
          label="Embedding model"
          options={[{ value: '', label: 'Workspace default' }, ...(models.data ?? []).map((m) => ({ value: m.model_id, label: m.model_id }))]}
          value={embedding}
          onChange={(e) => setEmbedding(e.target.value)}
        />
        <SelectField
          label="Permission"
          options={[
            { value: 'me', label: 'Only me' },
            { value: 'team', label: 'Team members' },
          ]}
          value={permission}
          onChange={(e) => setPermission(e.target.value)}
        />
        <ErrorMessage error={error ?? models.error} />
        <div className="form-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create dataset'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
