import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import { DataTable } from '../components/DataTable.js';
import { ListStatus } from '../components/ListStatus.js';
import { CheckboxField, Dialog, ErrorMessage, PageHeader, Pager, ProgressBar, RangeField, SubmitButton, TextArea, TextField, formatTime } from '../components/ui.js';
import { useAction, useConfirmedAction, usePolling, useLoad } from '../hooks.js';
import { ExtractedItems, ItemState } from '../components/MemoryItems.js';
import type { Memory } from './MemoriesPage.js';

interface MemoryMessage {
  message_id: number;
  message_type: string;
  agent_id: string;
  agent_name?: string;
  session_id: string;
  valid_at: number | null;
  invalid_at: number | null;
  replaced_by: number | null;
  forget_at: number | null;
  status: boolean;
  task?: { progress: number; progress_msg: string };
  extract?: MemoryMessage[];
}

interface Found extends MemoryMessage {
  content: string;
  similarity: number;
  vector_similarity: number;
  term_similarity: number;
}

const PAGE_SIZE = 50;
const POLL_MS = 2000;

export function MemoryPage({ memoryId }: { memoryId: string }) {
  const memory = useLoad((signal) => api.get<Memory>(`/memories/${memoryId}/config`, undefined, signal), [memoryId]);
  const [page, setPage] = useState(1);
  // History: items replaced or retracted are listed too, marked (include_invalid=true).
  const [history, setHistory] = useState(false);
  const messages = useLoad(
    (signal) =>
      api.get<{ messages: { message_list: MemoryMessage[]; total_count: number } }>(`/memories/${memoryId}`, { page, page_size: PAGE_SIZE, ...(history ? { include_invalid: true } : {}) }, signal),
    [memoryId, page, history],
  );
  const [content, setContent] = useState<{ id: number; text: string }>();
  const action = useConfirmedAction(messages.reload);
  const list = messages.data?.messages.message_list ?? [];
  const extracting = list.some((m) => m.task && m.task.progress >= 0 && m.task.progress < 1);
  usePolling(messages, POLL_MS, extracting);

  const ref = (m: MemoryMessage) => `${memoryId}:${m.message_id}`;
  /** The switch moves at once; the list's next answer replaces these. */
  const [statuses, setStatuses] = useState<Record<number, boolean>>({});
  useEffect(() => {
    setStatuses({});
  }, [messages.data]);
  const setStatus = async (m: MemoryMessage, status: boolean) => {
    setStatuses((s) => ({ ...s, [m.message_id]: status }));
    await action.run(() => api.put(`/messages/${ref(m)}`, { status }));
    messages.reload();
  };
  const show = async (m: MemoryMessage) => {
    const found = await action.run(() => api.get<{ content: string }>(`/messages/${ref(m)}/content`));
    if (found) setContent({ id: m.message_id, text: found.content });
  };

  return (
    <>
      <PageHeader title={memory.data?.name ?? 'Memory'} back={{ to: '/memories', label: 'Memories' }} />
      <ErrorMessage error={memory.error ?? action.error} />
      {memory.data && (
        <p className="muted">
          Types: {memory.data.memory_type.join(', ')} · chat model {memory.data.llm_id} · size limit {Math.round(memory.data.memory_size / 1024)} KB
        </p>
      )}
      <MemorySearch memoryId={memoryId} />
      <AddTurn memoryId={memoryId} onAdded={messages.reload} />
      <h2>Messages</h2>
      <CheckboxField
        label="Show history"
        hint="Also list extracted items that were corrected (replaced) or retracted, marked as such."
        checked={history}
        onChange={(e) => setHistory(e.target.checked)}
      />
      <ListStatus list={messages} count={messages.data && list.length} empty="No messages yet: agents with a Memory component add them, or add a turn above." />
      {list.length > 0 && (
        <DataTable
          caption="Messages"
          rows={list}
          rowKey={(m) => m.message_id}
          columns={[
            {
              label: 'Message',
              cell: (m) => (
                <>
                  #{m.message_id} {m.message_type}
                  <div className="small muted">{formatTime(m.valid_at)}</div>
                  {m.forget_at && <span className="badge">forgotten</span>}
                  {m.message_type !== 'raw' && <ItemState item={m} />}
                </>
              ),
            },
            {
              label: 'Agent / session',
              cell: (m) => (
                <>
                  {m.agent_name || m.agent_id}
                  <div className="small muted">{m.session_id}</div>
                </>
              ),
            },
            { label: 'Extraction', cell: (m) => <Extraction task={m.task} id={m.message_id} /> },
            {
              label: 'Extracted items',
              // An item listed on its own (its turn is gone) gets the same actions as a nested one.
              cell: (m) => <ExtractedItems memoryId={memoryId} items={m.message_type === 'raw' ? (m.extract ?? []) : [m]} onChanged={messages.reload} />,
            },
          ]}
          actions={(m) => (
            <>
              <CheckboxField label="Enabled" checked={statuses[m.message_id] ?? m.status} onChange={(e) => setStatus(m, e.target.checked)} />
              <button type="button" onClick={() => show(m)} aria-label={`Show message ${m.message_id}`}>
                Show
              </button>
              <button
                type="button"
                className="danger"
                onClick={() =>
                  action.confirmThenRun('Forget this message? It stays listed but is never retrieved again, and goes first when the memory is full.', () => api.delete(`/messages/${ref(m)}`))
                }
                disabled={Boolean(m.forget_at)}
                aria-label={`Forget message ${m.message_id}`}
              >
                Forget
              </button>
            </>
          )}
        />
      )}
      {messages.data && <Pager page={page} pageSize={PAGE_SIZE} total={messages.data.messages.total_count} onPage={setPage} />}
      <Dialog title={content ? `Message #${content.id}` : 'Message'} open={Boolean(content)} onClose={() => setContent(undefined)} wide>
        <p className="chunk-content">{content?.text}</p>
      </Dialog>
    </>
  );
}

function Extraction({ task, id }: { task?: { progress: number; progress_msg: string }; id: number }) {
  if (!task) return <span className="muted">—</span>;
  if (task.progress < 0) return <span className="error-text">{task.progress_msg || 'Failed'}</span>;
  if (task.progress >= 1) return <span className="badge ok wrap">{task.progress_msg || 'Done'}</span>;
  return (
    <>
      <ProgressBar value={task.progress} label={`Extraction of message ${id}`} />
      <div className="small muted">{task.progress_msg}</div>
    </>
  );
}

function MemorySearch({ memoryId }: { memoryId: string }) {
  const [query, setQuery] = useState('');
  const [threshold, setThreshold] = useState(0.2);
  const [weight, setWeight] = useState(0.7);
  const [found, setFound] = useState<Found[]>();
  const { busy, error, run } = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await run(() => api.get<Found[]>('/messages/search', { query, memory_id: memoryId, similarity_threshold: threshold, keywords_similarity_weight: weight, top_n: 10 }));
    if (r) setFound(r);
  };
  return (
    <details className="card">
      <summary>Search this memory</summary>
      <form onSubmit={submit}>
        <TextField label="Search" required value={query} onChange={(e) => setQuery(e.target.value)} />
        <RangeField label="Similarity threshold" min={0} max={1} step={0.01} value={threshold} onChange={setThreshold} />
        <RangeField label="Keyword weight" min={0} max={1} step={0.01} value={weight} onChange={setWeight} hint="Default 0.7 (RAGFlow's): keywords count 70%, meaning 30%. 0.5 weighs them equally." />
        <ErrorMessage error={error} />
        <SubmitButton label="Search" busy={busy} busyLabel="Searching…" />
      </form>
      {found && (
        <ol className="chunk-list" aria-label="Search results">
          {found.length === 0 && <li className="muted">Nothing found.</li>}
          {found.map((f) => (
            <li key={`${f.message_id}-${f.message_type}`} className="chunk">
              <div className="scores">
                <span>
                  #{f.message_id} {f.message_type}
                </span>
                <span>similarity {f.similarity.toFixed(3)}</span>
                <span>vector {f.vector_similarity.toFixed(3)}</span>
                <span>term {f.term_similarity.toFixed(3)}</span>
              </div>
              <p className="chunk-content">{f.content}</p>
            </li>
          ))}
        </ol>
      )}
    </details>
  );
}

function AddTurn({ memoryId, onAdded }: { memoryId: string; onAdded: () => void }) {
  const [agentId, setAgentId] = useState('console');
  const [sessionId, setSessionId] = useState('console');
  const [userInput, setUserInput] = useState('');
  const [response, setResponse] = useState('');
  const { busy, error, run } = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const ok = await run(() => api.post('/messages', { memory_id: [memoryId], agent_id: agentId, session_id: sessionId, user_input: userInput, agent_response: response }));
    if (ok !== undefined) {
      setUserInput('');
      setResponse('');
      onAdded();
    }
  };
  return (
    <details className="card">
      <summary>Add a conversation turn</summary>
      <form onSubmit={submit}>
        <TextField label="Agent id" required value={agentId} onChange={(e) => setAgentId(e.target.value)} />
        <TextField label="Session id" required value={sessionId} onChange={(e) => setSessionId(e.target.value)} />
        <TextArea label="User said" rows={2} required value={userInput} onChange={(e) => setUserInput(e.target.value)} />
        <TextArea label="Agent answered" rows={2} required value={response} onChange={(e) => setResponse(e.target.value)} />
        <ErrorMessage error={error} />
        <SubmitButton label="Add turn" busy={busy} busyLabel="Adding…" />
      </form>
    </details>
  );
}
