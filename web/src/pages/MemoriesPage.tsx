import { useState } from 'react';
import { api } from '../api/http.js';
import { CheckboxList } from '../components/CheckboxList.js';
import { FormDialog } from '../components/FormDialog.js';
import { LinkCard } from '../components/LinkCard.js';
import { ListStatus } from '../components/ListStatus.js';
import { ModelSelect } from '../components/ModelSelect.js';
import { PageHeader, TextArea, TextField, formatTime } from '../components/ui.js';
import { useAction, useConfirmedAction, useLoad } from '../hooks.js';
import { navigate } from '../router.js';

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
  const del = useConfirmedAction(list.reload);

  return (
    <>
      <PageHeader title="Memories">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          New memory
        </button>
      </PageHeader>
      <p className="muted">Agents store conversation turns in memories; items are extracted from each turn in the background and searched later.</p>
      <ListStatus list={list} count={list.data?.memory_list.length} error={del.error} empty="No memories yet." />
      <div className="cards">
        {list.data?.memory_list.map((m) => (
          <LinkCard key={m.id} title={m.name} to={`/memories/${m.id}`}>
            <p className="small muted">Types: {m.memory_type.join(', ')}</p>
            <p className="small muted">
              Chat model {m.llm_id} · embedding {m.embd_id}
            </p>
            {m.create_time && <p className="small muted">Created {formatTime(m.create_time)}</p>}
            <button
              type="button"
              className="danger"
              onClick={() => del.confirmThenRun(`Delete the memory "${m.name}" and its messages?`, () => api.delete(`/memories/${m.id}`))}
              aria-label={`Delete ${m.name}`}
            >
              Delete
            </button>
          </LinkCard>
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
  const [llmId, setLlmId] = useState('');
  const [embdId, setEmbdId] = useState('');
  const { busy, error, run } = useAction();

  const submit = async () => {
    const memory = await run(() => api.post<Memory>('/memories', { name, memory_type: types, llm_id: llmId, embd_id: embdId, description: description || null }));
    if (memory) navigate(`/memories/${memory.id}`);
  };

  return (
    <FormDialog title="New memory" onClose={onClose} onSubmit={submit} busy={busy} error={error} submitLabel="Create memory" busyLabel="Creating…">
      <TextField label="Name" required maxLength={128} value={name} onChange={(e) => setName(e.target.value)} autoFocus />
      <TextArea label="Description" rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
      <CheckboxList legend="Memory types" options={MEMORY_TYPES} value={types} onChange={setTypes} />
      <ModelSelect type="chat" label="Chat model (extraction)" value={llmId} onChange={setLlmId} />
      <ModelSelect type="embedding" label="Embedding model" value={embdId} onChange={setEmbdId} />
    </FormDialog>
  );
}
