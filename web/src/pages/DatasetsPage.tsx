import { useState } from 'react';
import { api, request } from '../api/http.js';
import { chunkMethodOptions, DATASET_CHUNK_METHODS, PERMISSION_OPTIONS, type Dataset } from '../api/types.js';
import { DataTable } from '../components/DataTable.js';
import { FormDialog } from '../components/FormDialog.js';
import { IngestionChoice } from '../components/IngestionChoice.js';
import { ListStatus } from '../components/ListStatus.js';
import { ModelSelect } from '../components/ModelSelect.js';
import { PageHeader, Pager, SelectField, TextArea, TextField, formatTime } from '../components/ui.js';
import { useAction, useConfirmedAction, useDebounced, useLoad } from '../hooks.js';
import { Link, navigate } from '../router.js';

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
  const del = useConfirmedAction(list.reload);

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
      <ListStatus list={list} count={list.data?.data.length} error={del.error} empty="No datasets yet. Create one, then upload documents into it." />
      {list.data && list.data.data.length > 0 && (
        <DataTable
          caption="Datasets"
          rows={list.data.data}
          rowKey={(ds) => ds.id}
          columns={[
            {
              label: 'Name',
              cell: (ds) => (
                <>
                  <Link to={`/datasets/${ds.id}`}>{ds.name}</Link>
                  {ds.description && <div className="muted small">{ds.description}</div>}
                </>
              ),
            },
            { label: 'Documents', cell: (ds) => ds.document_count },
            { label: 'Chunks', cell: (ds) => ds.chunk_count },
            { label: 'Parsing', cell: (ds) => <StatusCounts ds={ds} /> },
            { label: 'Chunk method', cell: (ds) => (ds.pipeline_id ? 'Ingestion pipeline' : ds.chunk_method) },
            { label: 'Updated', cell: (ds) => formatTime(ds.update_time) },
          ]}
          actions={(ds) => (
            <>
              <Link to={`/datasets/${ds.id}/settings`} aria-label={`Settings of ${ds.name}`}>
                Settings
              </Link>
              <button
                type="button"
                className="danger"
                onClick={() => del.confirmThenRun(`Delete the dataset "${ds.name}" with its ${ds.document_count} documents?`, () => api.delete('/datasets', { ids: [ds.id] }))}
                aria-label={`Delete ${ds.name}`}
                disabled={del.busy}
              >
                Delete
              </button>
            </>
          )}
        />
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
  const [usePipeline, setUsePipeline] = useState(false);
  const [pipelineId, setPipelineId] = useState('');
  const [embedding, setEmbedding] = useState('');
  const [permission, setPermission] = useState('me');
  const { busy, error, run } = useAction();

  const submit = async () => {
    const ds = await run(() =>
      api.post<Dataset>('/datasets', {
        name,
        description: description || null,
        // RAGFlow's choice: a chunk method, or an ingestion pipeline (parse_type 1 with its id).
        ...(usePipeline ? { parse_type: 1, pipeline_id: pipelineId } : { chunk_method: chunkMethod }),
        permission,
        embedding_model: embedding || null,
      }),
    );
    if (ds) navigate(`/datasets/${ds.id}`);
  };

  return (
    <FormDialog
      title="New dataset"
      open={open}
      onClose={onClose}
      onSubmit={submit}
      busy={busy}
      error={error}
      submitLabel="Create dataset"
      busyLabel="Creating…"
      submitDisabled={usePipeline && !pipelineId}
    >
      <TextField label="Name" required maxLength={128} value={name} onChange={(e) => setName(e.target.value)} autoFocus />
      <TextArea label="Description" rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
      <IngestionChoice usePipeline={usePipeline} onUsePipeline={setUsePipeline} pipelineId={pipelineId} onPipeline={setPipelineId}>
        <SelectField label="Chunk method" options={chunkMethodOptions(DATASET_CHUNK_METHODS)} value={chunkMethod} onChange={(e) => setChunkMethod(e.target.value)} />
      </IngestionChoice>
      <ModelSelect type="embedding" label="Embedding model" none="Workspace default" value={embedding} onChange={setEmbedding} />
      <SelectField label="Permission" options={PERMISSION_OPTIONS} value={permission} onChange={(e) => setPermission(e.target.value)} />
    </FormDialog>
  );
}
