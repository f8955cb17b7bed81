import { useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import type { Agent, AgentTemplate } from '../api/types.js';
import { DatasetPicker } from '../components/DatasetPicker.js';
import { Dialog, ErrorMessage, Loading, PageHeader, Pager, TextField, formatTime } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { Link, navigate } from '../router.js';

const PAGE_SIZE = 30;

export function AgentsPage() {
  const [page, setPage] = useState(1);
  const [choosing, setChoosing] = useState(false);
  const list = useLoad((signal) => api.get<{ canvas: Agent[]; total: number }>('/agents', { page, page_size: PAGE_SIZE }, signal), [page]);
  const del = useAction();

  const remove = async (a: Agent) => {
    if (!confirm(`Delete the agent "${a.title}" and its sessions?`)) return;
    await del.run(() => api.delete(`/agents/${a.id}`));
    list.reload();
  };

  return (
    <>
      <PageHeader title="Agents">
        <button type="button" className="primary" onClick={() => setChoosing(true)}>
          New agent from a template
        </button>
      </PageHeader>
      <ErrorMessage error={list.error ?? del.error} />
      {!list.data && list.loading && <Loading />}
      {list.data?.canvas.length === 0 && <p className="empty">No agents yet. Start from a template.</p>}
      <div className="cards">
        {list.data?.canvas.map((a) => (
          <article className="card" key={a.id} aria-labelledby={`agent-${a.id}`}>
            <h2 id={`agent-${a.id}`}>
              <Link to={`/agents/${a.id}`}>{a.title}</Link>
            </h2>
            {a.description && <p className="small muted">{a.description.length > 160 ? `${a.description.slice(0, 160)}…` : a.description}</p>}
            <p className="small muted">
              {Object.keys(a.dsl?.components ?? {}).length} components · updated {formatTime(a.update_time)}
            </p>
            <button type="button" className="danger" onClick={() => remove(a)} aria-label={`Delete ${a.title}`}>
              Delete
            </button>
          </article>
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

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!chosen) return;
    const agent = await run(() => api.post<Agent>('/agents', { template_id: chosen.id, title: title || undefined, ...(datasetIds.length ? { dataset_ids: datasetIds } : {}) }));
    if (agent) navigate(`/agents/${agent.id}`);
  };

  return (
    <Dialog title="New agent from a template" open onClose={onClose} wide>
      <ErrorMessage error={templates.error} />
      {!templates.data && !templates.error && <Loading />}
      <form onSubmit={submit}>
        <fieldset>
          <legend>Template</legend>
          {templates.data?.map((t) => (
            <div className="field checkbox" key={t.id}>
              <input id={`tpl-${t.id}`} type="radio" name="template" checked={chosen?.id === t.id} onChange={() => (setChosen(t), setTitle(t.title.en ?? t.id))} />
              <label htmlFor={`tpl-${t.id}`}>
                <strong>{t.title.en ?? t.id}</strong>
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
        <ErrorMessage error={error} />
        <div className="form-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={!chosen || busy}>
            {busy ? 'Creating…' : 'Create agent'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
