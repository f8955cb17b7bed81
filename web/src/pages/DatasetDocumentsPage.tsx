import { useCallback, useState } from 'react';
import { api, request } from '../api/http.js';
import { downloadFile } from '../api/download.js';
import { chunkMethodOptions, DATASET_CHUNK_METHODS, type Doc, type IngestionLog, type IngestionStep } from '../api/types.js';
import { DataTable } from '../components/DataTable.js';
import { DatasetHeader, useDataset } from '../components/DatasetTabs.js';
import { FormDialog } from '../components/FormDialog.js';
import { ListStatus } from '../components/ListStatus.js';
import { MetadataEditor } from '../components/MetadataEditor.js';
import { ParserConfigForm } from '../components/ParserConfigForm.js';
import { UploadZone } from '../components/UploadZone.js';
import { CheckboxField, ErrorMessage, Pager, ProgressBar, SelectField, TextField, countOf, formatBytes } from '../components/ui.js';
import { useAction, useConfirmedAction, useDebounced, usePolling, useLoad } from '../hooks.js';
import { Link } from '../router.js';

const PAGE_SIZE = 30;
const POLL_MS = 1500;

export function DatasetDocumentsPage({ datasetId }: { datasetId: string }) {
  const dataset = useDataset(datasetId);
  const [page, setPage] = useState(1);
  const [keywords, setKeywords] = useState('');
  const searched = useDebounced(keywords);
  const [parseAfterUpload, setParseAfterUpload] = useState(true);
  const [editing, setEditing] = useState<Doc>();
  const docs = useLoad(
    (signal) => api.get<{ total: number; docs: Doc[] }>(`/datasets/${datasetId}/documents`, { page, page_size: PAGE_SIZE, keywords: searched }, signal),
    [datasetId, page, searched],
  );
  const action = useConfirmedAction(docs.reload);
  const running = docs.data?.docs.some((d) => d.run === 'RUNNING') ?? false;
  usePolling(docs, POLL_MS, running);
  const pipeline = !!dataset.data?.pipeline_id;

  const parse = useCallback(
    async (ids: string[]) => {
      await action.run(() => request('POST', `/datasets/${datasetId}/documents/parse`, { body: { document_ids: ids } }));
      docs.reload();
    },
    [datasetId, action, docs],
  );

  const onUploaded = useCallback(
    (ids: string[]) => {
      if (parseAfterUpload) void parse(ids);
      else docs.reload();
    },
    [parseAfterUpload, parse, docs],
  );

  const stop = async (ids: string[]) => {
    await action.run(() => request('POST', `/datasets/${datasetId}/documents/stop`, { body: { document_ids: ids } }));
    docs.reload();
  };

  // A dataset that cannot be loaded (a wrong id, no access) says so once, with nothing to act on below it.
  if (dataset.error) return <DatasetHeader dataset={undefined} error={dataset.error} />;
  return (
    <>
      <DatasetHeader dataset={dataset.data} error={dataset.error} />
      <UploadZone datasetId={datasetId} onUploaded={onUploaded} />
      <CheckboxField label="Parse documents as soon as they are uploaded" checked={parseAfterUpload} onChange={(e) => setParseAfterUpload(e.target.checked)} />
      <div className="toolbar">
        <TextField label="Search documents" type="search" value={keywords} onChange={(e) => (setKeywords(e.target.value), setPage(1))} />
      </div>
      <ListStatus list={docs} count={docs.data?.docs.length} error={action.error} onDismiss={() => action.setError(undefined)} empty="No documents yet: drop files above." />
      {docs.data && docs.data.docs.length > 0 && (
        <DataTable
          caption="Documents"
          className="documents"
          rows={docs.data.docs}
          rowKey={(d) => d.id}
          rowAttributes={(d) => ({ 'data-document': d.name })}
          columns={[
            { label: 'Name', cell: (d) => <Link to={`/datasets/${datasetId}/documents/${d.id}`}>{d.name}</Link> },
            { label: 'Size', cell: (d) => formatBytes(d.size) },
            { label: 'Chunk method', cell: (d) => (pipeline ? 'Ingestion pipeline' : d.chunk_method) },
            { label: 'Chunks', cell: (d) => d.chunk_count },
            {
              label: 'Parsing',
              cell: (d) => (
                <>
                  <RunState doc={d} />
                  {pipeline && <IngestionSteps datasetId={datasetId} doc={d} />}
                </>
              ),
            },
          ]}
          actions={(d) => (
            <>
              {d.run === 'RUNNING' ? (
                <button type="button" onClick={() => stop([d.id])} aria-label={`Stop parsing ${d.name}`}>
                  Stop
                </button>
              ) : (
                <button type="button" onClick={() => parse([d.id])} aria-label={`${d.run === 'UNSTART' ? 'Parse' : 'Re-parse'} ${d.name}`}>
                  {d.run === 'UNSTART' ? 'Parse' : 'Re-parse'}
                </button>
              )}
              <button type="button" onClick={() => setEditing(d)} aria-label={`Settings of ${d.name}`}>
                Settings
              </button>
              <button type="button" onClick={() => action.run(() => downloadFile(`/datasets/${datasetId}/documents/${d.id}`, d.name))} aria-label={`Download ${d.name}`}>
                Download
              </button>
              <button
                type="button"
                className="danger"
                onClick={() => action.confirmThenRun(`Delete "${d.name}" and its chunks?`, () => api.delete(`/datasets/${datasetId}/documents`, { ids: [d.id] }))}
                aria-label={`Delete ${d.name}`}
              >
                Delete
              </button>
            </>
          )}
        />
      )}
      {docs.data && <Pager page={page} pageSize={PAGE_SIZE} total={docs.data.total} onPage={setPage} />}
      {editing && (
        <DocumentSettingsDialog
          datasetId={datasetId}
          doc={editing}
          onClose={(saved) => {
            setEditing(undefined);
            if (saved) docs.reload();
          }}
        />
      )}
    </>
  );
}

function RunState({ doc }: { doc: Doc }) {
  const labels: Record<string, string> = { UNSTART: 'Not started', RUNNING: 'Parsing', DONE: 'Done', FAIL: 'Failed', CANCEL: 'Cancelled' };
  const cls: Record<string, string> = { DONE: 'ok', RUNNING: 'busy', FAIL: 'bad' };
  return (
    <div className="run-state" data-run={doc.run}>
      <span className={`badge ${cls[doc.run] ?? ''}`}>{labels[doc.run] ?? doc.run}</span>
      {doc.run === 'RUNNING' && <ProgressBar value={doc.progress} label={`Parsing of ${doc.name}`} />}
      {doc.progress_msg && <div className={`small ${doc.run === 'FAIL' ? 'error-text' : 'muted'}`}>{lastLine(doc.progress_msg)}</div>}
    </div>
  );
}

const STEP_LABELS: Record<string, string> = { RUNNING: 'Running', DONE: 'Done', FAIL: 'Failed', CANCEL: 'Cancelled' };
const STEP_CLASSES: Record<string, string> = { DONE: 'ok', RUNNING: 'busy', FAIL: 'bad' };

/**
 * The steps of a document's latest ingestion run through its dataset's pipeline: each component's status,
 * duration and output counts. While the document runs, the steps load again on each poll of the document
 * list (a new `doc`); once it ends, until its last step is logged as ended too.
 */
function IngestionSteps({ datasetId, doc }: { datasetId: string; doc: Doc }) {
  const logs = useLoad(
    (signal) => api.get<{ total: number; logs: IngestionLog[] }>(`/datasets/${datasetId}/ingestions`, { document_id: doc.id, page_size: 1 }, signal),
    [datasetId, doc.id, doc.run === 'RUNNING' ? doc : doc.run],
  );
  const log = logs.data?.logs[0];
  // The document is marked DONE by its last step, just before that step's log ends.
  usePolling(logs, POLL_MS, doc.run !== 'RUNNING' && log?.operation_status === 'RUNNING');
  if (logs.error) return <ErrorMessage error={logs.error} />;
  if (!log) return null;
  return (
    <ol className="ingestion-steps" aria-label={`Ingestion steps of ${doc.name}`}>
      {log.steps.map((step) => (
        <li key={step.component_id} data-step={step.component_id} data-status={step.status}>
          <span className={`badge ${STEP_CLASSES[step.status] ?? ''}`}>{STEP_LABELS[step.status] ?? step.status}</span> <strong>{step.component_id}</strong>{' '}
          <span className="muted small">{stepSummary(step)}</span>
          {Array.isArray(step.output.notes) && step.output.notes.length > 0 && <div className="small muted">{step.output.notes.join(' ')}</div>}
          {step.error && <div className="small error-text">{step.error}</div>}
        </li>
      ))}
    </ol>
  );
}

/** "0.42 s · 3 chunks · 120 tokens": a step's duration and the counts of its output. */
function stepSummary(step: IngestionStep): string {
  const parts = [step.duration === null ? 'running…' : `${step.duration.toFixed(2)} s`];
  for (const [key, value] of Object.entries(step.output)) {
    if (typeof value === 'number') parts.push(countOf(value, key.replace(/_/g, ' ').replace(/s$/, '')));
  }
  return parts.join(' · ');
}

function lastLine(msg: string): string {
  return msg.trim().split('\n').at(-1) ?? '';
}

function DocumentSettingsDialog({ datasetId, doc, onClose }: { datasetId: string; doc: Doc; onClose: (saved: boolean) => void }) {
  const [name, setName] = useState(doc.name);
  const [method, setMethod] = useState(doc.chunk_method);
  const [config, setConfig] = useState(doc.parser_config);
  const [meta, setMeta] = useState(doc.meta_fields ?? {});
  const { busy, error, run } = useAction();

  const submit = async () => {
    const body: Record<string, unknown> = { meta_fields: meta };
    if (name !== doc.name) body.name = name;
    if (method !== doc.chunk_method) body.chunk_method = method;
    if (method !== doc.chunk_method || JSON.stringify(config) !== JSON.stringify(doc.parser_config)) body.parser_config = config;
    const ok = await run(() => api.patch(`/datasets/${datasetId}/documents/${doc.id}`, body));
    if (ok !== undefined) onClose(true);
  };

  return (
    <FormDialog title={`Document settings: ${doc.name}`} onClose={() => onClose(false)} onSubmit={submit} busy={busy} error={error} submitLabel="Save" wide>
      <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} />
      <SelectField
        label="Chunk method"
        hint="A new chunk method takes effect when the document is parsed again."
        options={chunkMethodOptions(DATASET_CHUNK_METHODS)}
        value={method}
        onChange={(e) => {
          setMethod(e.target.value);
          setConfig({});
        }}
      />
      <ParserConfigForm method={method} value={config} onChange={setConfig} />
      <MetadataEditor value={meta} onChange={setMeta} />
    </FormDialog>
  );
}
