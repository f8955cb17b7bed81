import { useState } from 'react';
import { api } from '../api/http.js';
import type { Chat } from '../api/types.js';
import { DatasetPicker } from '../components/DatasetPicker.js';
import { FormDialog } from '../components/FormDialog.js';
import { LinkCard } from '../components/LinkCard.js';
import { ListStatus } from '../components/ListStatus.js';
import { ModelSelect } from '../components/ModelSelect.js';
import { PageHeader, Pager, TextField, formatTime } from '../components/ui.js';
import { useAction, useConfirmedAction, useLoad } from '../hooks.js';
import { Link, navigate } from '../router.js';

const PAGE_SIZE = 30;

export function ChatsPage() {
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const list = useLoad((signal) => api.get<{ chats: Chat[]; total: number }>('/chats', { page, page_size: PAGE_SIZE, orderby: 'update_time' }, signal), [page]);
  const del = useConfirmedAction(list.reload);

  return (
    <>
      <PageHeader title="Chat assistants">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          New chat assistant
        </button>
      </PageHeader>
      <ListStatus list={list} count={list.data?.chats.length} error={del.error} empty="No chat assistants yet. Create one to chat with your datasets." />
      <div className="cards">
        {list.data?.chats.map((c) => (
          <LinkCard key={c.id} title={c.name} to={`/chats/${c.id}`}>
            <p className="small muted">
              {c.kb_names?.length ? `Datasets: ${c.kb_names.join(', ')}` : 'No datasets'} · {c.llm_id ?? 'default model'}
            </p>
            <p className="small muted">Updated {formatTime(c.update_time)}</p>
            <div className="row-actions">
              <Link to={`/chats/${c.id}/settings`} className="button" aria-label={`Configure ${c.name}`}>
                Configure
              </Link>
              <button
                type="button"
                className="danger"
                onClick={() => del.confirmThenRun(`Delete the chat assistant "${c.name}" and its sessions?`, () => api.delete('/chats', { ids: [c.id] }))}
                aria-label={`Delete ${c.name}`}
              >
                Delete
              </button>
            </div>
          </LinkCard>
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
  const { busy, error, run } = useAction();

  const submit = async () => {
    const body: Record<string, unknown> = { name, dataset_ids: datasetIds, llm_id: llmId || null };
    // Without datasets there is no {knowledge} to fill: the prompt must not ask for it (spec).
    if (!datasetIds.length)
      body.prompt_config = { system: 'You are a helpful assistant. Answer the question clearly and concisely.', parameters: [], empty_response: '' };
    const chat = await run(() => api.post<Chat>('/chats', body));
    if (chat) navigate(`/chats/${chat.id}`);
  };

  return (
    <FormDialog title="New chat assistant" onClose={onClose} onSubmit={submit} busy={busy} error={error} submitLabel="Create" busyLabel="Creating…">
      <TextField label="Name" required value={name} onChange={(e) => setName(e.target.value)} autoFocus />
      <DatasetPicker value={datasetIds} onChange={setDatasetIds} />
      <ModelSelect type="chat" label="Chat model" none="Workspace default" value={llmId} onChange={setLlmId} />
    </FormDialog>
  );
}
