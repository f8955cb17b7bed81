import { useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import { Dialog, ErrorMessage, Loading, PageHeader, SelectField, TextArea, TextField, formatTime } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { useModels } from '../models.js';
import { Link, navigate } from '../router.js';

export interface Memory {
  id: string;
  name: string;
  memory_type: string[];
  embd_id: string;
  llm_id: string;
  description: string | null;
  memory_size: number;
  permissions?: string;
  create_time?: number;
  update_time?: number;
}

export const MEMORY_TYPES = [
  { value: 'raw', label: 'Raw (the conversation turns themselves)' },
  { value: 'semantic', label: 'Semantic (facts)' },
  { value: 'episodic', label: 'Episodic (events)' },
  { value: 'procedural', label: 'Procedural (how-tos)' },
];

export function MemoriesPage() {
  const list = useLoad((signal) => api.get<{ memory_list: Memory[]; total_count: number }>('/memories', { page_size: 100 }, signal), []);
  const [creating, setCreating] = useState(false);
  const del = useAction();

  const remove = async (m: Memory) => {
    if (!confirm(`Delete the memory "${m.name}" and its messages?`)) return;
    await del.run(() => api.delete(`/memories/${m.id}`));
    list.reload();
  };

  return (
    <>
      <PageHeader title="Memories">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          New memory
        </button>
      </PageHeader>
      <p className="muted">Agents store conversation turns in memories; items are extracted from each turn in the background and searched later.</p>
      <ErrorMessage error={list.error ?? del.error} />
      {!list.data && list.loading && <Loading />}
      {list.data?.memory_list.length === 0 && <p className="empty">No memories yet.</p>}
      <div className="cards">
        {list.data?.memory_list.map((m) => (
          <article className="card" key={m.id} aria-labelledby={`memory-${m.id}`}>
            <h2 id={`memory-${m.id}`}>
              <Link to={`/memories/${m.id}`}>{m.name}</Link>
            </h2>
            <p className="small muted">Types: {m.memory_type.join(', ')}</p>
            <p className="small muted">
              Chat model {m.llm_id} · embedding {m.embd_id}
            </p>
            {m.create_time && <p className="small muted">Created {formatTime(m.create_time)}</p>}
            <button type="button" className="danger" onClick={() => remove(m)} aria-label={`Delete ${m.name}`}>
              Delete
            </button>
          </article>
        ))}
      </div>
      {creating && <CreateMemoryDialog onClose={() => setCreating(false)} />}
    </>
  );
}

function CreateMemoryDialog({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<string[]>(['raw']);
  const chatModels = useModels('chat');
  const embeddingModels = useModels('embedding');
  const [llmId, setLlmId] = useState('');
  const [embdId, setEmbdId] = useState('');
  const { busy, error, run } = useAction();
  const llm = llmId || chatModels.data?.[0]?.model_id || '';
  const embd = embdId || embeddingModels.data?.[0]?.model_id || '';

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const memory = await run(() => api.post<Memory>('/memories', { name, memory_type: types, llm_id: llm, embd_id: embd, description: description || null }));
    if (memory) navigate(`/memories/${memory.id}`);
  };

  return (
    <Dialog title="New memory" open onClose={onClose}>
      <form onSubmit={submit}>
        <TextField label="Name" required maxLength={128} value={name} onChange={(e) => setName(e.target.value)} autoFocus />
        <TextArea label="Description" rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
        <fieldset>
          <legend>Memory types</legend>
          {MEMORY_TYPES.map((t) => (
            <div className="field checkbox" key={t.value}>
              <input
                id={`mt-${t.value}`}
                type="checkbox"
                checked={types.includes(t.value)}
                onChange={(e) => setTypes(e.target.checked ? [...types, t.value] : types.filter((x) => x !== t.value))}
              />
              <label htmlFor={`mt-${t.value}`}>{t.label}</label>
            </div>
          ))}
        </fieldset>
        <SelectField label="Chat model (extraction)" options={(chatModels.data ?? []).map((m) => ({ value: m.model_id, label: m.model_id }))} value={llm} onChange={(e) => setLlmId(e.target.value)} />
        <SelectField label="Embedding model" options={(embeddingModels.data ?? []).map((m) => ({ value: m.model_id, label: m.model_id }))} value={embd} onChange={(e) => setEmbdId(e.target.value)} />
        <ErrorMessage error={error ?? chatModels.error ?? embeddingModels.error} />
        <div className="form-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create memory'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
