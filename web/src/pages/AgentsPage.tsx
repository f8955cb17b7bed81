import { useState } from 'react';
import { api } from '../api/http.js';
import { DATAFLOW_CANVAS, type Agent, type AgentTemplate } from '../api/types.js';
import { DatasetPicker } from '../components/DatasetPicker.js';
import { FormDialog } from '../components/FormDialog.js';
import { LinkCard } from '../components/LinkCard.js';
import { ListStatus } from '../components/ListStatus.js';
import { ErrorMessage, Loading, PageHeader, Pager, TextField, formatTime } from '../components/ui.js';
import { useAction, useConfirmedAction, useLoad } from '../hooks.js';
import { navigate } from '../router.js';

const PAGE_SIZE = 30;

export function AgentsPage() {
  const [page, setPage] = useState(1);
  const [choosing, setChoosing] = useState(false);
  const list = useLoad((signal) => api.get<{ canvas: Agent[]; total: number }>('/agents', { page, page_size: PAGE_SIZE }, signal), [page]);
  const del = useConfirmedAction(list.reload);

  return (
    <>
      <PageHeader title="Agents">
        <button type="button" className="primary" onClick={() => setChoosing(true)}>
          New agent from a template
        </button>
      </PageHeader>
      <ListStatus list={list} count={list.data?.canvas.length} error={del.error} empty="No agents yet. Start from a template." />
      <div className="cards">
        {list.data?.canvas.map((a) => (
          <LinkCard key={a.id} title={a.title} to={`/agents/${a.id}`}>
            {a.canvas_category === DATAFLOW_CANVAS && <span className="badge">Ingestion pipeline</span>}
            {a.description && <p className="small muted">{a.description.length > 160 ? `${a.description.slice(0, 160)}…` : a.description}</p>}
            <p className="small muted">
              {Object.keys(a.dsl?.components ?? {}).length} components · updated {formatTime(a.update_time)}
            </p>
            <button
              type="button"
              className="danger"
              onClick={() =>
                del.confirmThenRun(a.canvas_category === DATAFLOW_CANVAS ? `Delete the ingestion pipeline "${a.title}"?` : `Delete the agent "${a.title}" and its sessions?`, () => api.delete(`/agents/${a.id}`))
              }
              aria-label={`Delete ${a.title}`}
            >
              Delete
            </button>
          </LinkCard>
        ))}
      </div>
      {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={setPage} />}
      {choosing && <TemplateDialog onClose={() => setChoosing(false)} />}
    </>
  );
}

function TemplateDialog({ onClose }: { onClose: () => void }) {
  const templates = useLoad((signal) => api.get<AgentTemplate[]>('/agents/templates', undefined, signal), []);
  const [chosen, setChosen] = useState<AgentTemplate>();
  const [title, setTitle] = useState('');
  const [datasetIds, setDatasetIds] = useState<string[]>([]);
  const { busy, error, run } = useAction();
  const usesRetrieval = chosen ? JSON.stringify(chosen.dsl.components).includes('"Retrieval"') : false;

  const submit = async () => {
    if (!chosen) return;
    const agent = await run(() => api.post<Agent>('/agents', { template_id: chosen.id, title: title || undefined, ...(datasetIds.length ? { dataset_ids: datasetIds } : {}) }));
    if (agent) navigate(`/agents/${agent.id}`);
  };

  return (
    <FormDialog title="New agent from a template" onClose={onClose} onSubmit={submit} busy={busy} error={error} submitLabel="Create agent" busyLabel="Creating…" submitDisabled={!chosen} wide>
      <ErrorMessage error={templates.error} />
      {!templates.data && !templates.error && <Loading />}
      <fieldset>
        <legend>Template</legend>
        {templates.data?.map((t) => (
          <div className="field checkbox" key={t.id}>
            <input id={`tpl-${t.id}`} type="radio" name="template" checked={chosen?.id === t.id} onChange={() => (setChosen(t), setTitle(t.title.en ?? t.id))} />
            <label htmlFor={`tpl-${t.id}`}>
              <strong>{t.title.en ?? t.id}</strong>
              {t.canvas_category === DATAFLOW_CANVAS && <> <span className="badge">Ingestion pipeline</span></>}
            </label>
            <small className="muted">{t.description.en}</small>
          </div>
        ))}
      </fieldset>
      {chosen && (
        <>
          <TextField label="Title" required value={title} onChange={(e) => setTitle(e.target.value)} />
          {usesRetrieval && <DatasetPicker value={datasetIds} onChange={setDatasetIds} legend="Datasets the agent searches" />}
        </>
      )}
    </FormDialog>
  );
}
