import { useCallback, useState } from 'react';
import { api, request } from '../api/http.js';
import { downloadFile } from '../api/download.js';
import { chunkMethodOptions, DATASET_CHUNK_METHODS, type Doc } from '../api/types.js';
import { DataTable } from '../components/DataTable.js';
import { DatasetHeader, useDataset } from '../components/DatasetTabs.js';
import { FormDialog } from '../components/FormDialog.js';
import { ListStatus } from '../components/ListStatus.js';
import { MetadataEditor } from '../components/MetadataEditor.js';
import { ParserConfigForm } from '../components/ParserConfigForm.js';
import { UploadZone } from '../components/UploadZone.js';
import { CheckboxField, Pager, ProgressBar, SelectField, TextField, formatBytes } from '../components/ui.js';
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
            { label: 'Chunk method', cell: (d) => d.chunk_method },
            { label: 'Chunks', cell: (d) => d.chunk_count },
            { label: 'Parsing', cell: (d) => <RunState doc={d} /> },
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
