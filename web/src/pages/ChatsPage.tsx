import { useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import type { Chat } from '../api/types.js';
import { DatasetPicker } from '../components/DatasetPicker.js';
import { Dialog, ErrorMessage, Loading, PageHeader, Pager, SelectField, TextField, formatTime } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { useModels } from '../models.js';
import { Link, navigate } from '../router.js';

const PAGE_SIZE = 30;

export function ChatsPage() {
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const list = useLoad((signal) => api.get<{ chats: Chat[]; total: number }>('/chats', { page, page_size: PAGE_SIZE, orderby: 'update_time' }, signal), [page]);
  const del = useAction();

  const remove = async (c: Chat) => {
    if (!confirm(`Delete the chat assistant "${c.name}" and its sessions?`)) return;
    await del.run(() => api.delete('/chats', { ids: [c.id] }));
    list.reload();
  };

  return (
    <>
      <PageHeader title="Chat assistants">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          New chat assistant
        </button>
      </PageHeader>
      <ErrorMessage error={list.error ?? del.error} />
      {!list.data && list.loading && <Loading />}
      {list.data?.chats.length === 0 && <p className="empty">No chat assistants yet. Create one to chat with your datasets.</p>}
      <div className="cards">
        {list.data?.chats.map((c) => (
          <article className="card" key={c.id} aria-labelledby={`chat-${c.id}`}>
            <h2 id={`chat-${c.id}`}>
              <Link to={`/chats/${c.id}`}>{c.name}</Link>
            </h2>
            <p className="small muted">
              {c.kb_names?.length ? `Datasets: ${c.kb_names.join(', ')}` : 'No datasets'} · {c.llm_id ?? 'default model'}
            </p>
            <p className="small muted">Updated {formatTime(c.update_time)}</p>
            <div className="row-actions">
              <Link to={`/chats/${c.id}/settings`} className="button" aria-label={`Configure ${c.name}`}>
                Configure
              </Link>
              <button type="button" className="danger" onClick={() => remove(c)} aria-label={`Delete ${c.name}`}>
                Delete
              </button>
            </div>
          </article>
        ))}
      </div>
      {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={setPage} />}
      {creating && <CreateChatDialog onClose={() => setCreating(false)} />}
    </>
  );
}

function CreateChatDialog({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState('');
  const [datasetIds, setDatasetIds] = useState<string[]>([]);
  const [llmId, setLlmId] = useState('');
  const models = useModels('chat');
  const { busy, error, run } = useAction();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const body: Record<string, unknown> = { name, dataset_ids: datasetIds, llm_id: llmId || null };
    // Without datasets there is no {knowledge} to fill: the prompt must not ask for it (spec).
    if (!datasetIds.length)
      body.prompt_config = { system: 'You are a helpful assistant. Answer the question clearly and concisely.', parameters: [], empty_response: '' };
    const chat = await run(() => api.post<Chat>('/chats', body));
    if (chat) navigate(`/chats/${chat.id}`);
  };

  return (
    <Dialog title="New chat assistant" open onClose={onClose}>
      <form onSubmit={submit}>
        <TextField label="Name" required value={name} onChange={(e) => setName(e.target.value)} autoFocus />
        <DatasetPicker value={datasetIds} onChange={setDatasetIds} />
        <SelectField
          label="Chat model"
          options={[{ value: '', label: 'Workspace default' }, ...(models.data ?? []).map((m) => ({ value: m.model_id, label: m.model_id }))]}
          value={llmId}
          onChange={(e) => setLlmId(e.target.value)}
        />
        <ErrorMessage error={error ?? models.error} />
        <div className="form-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
