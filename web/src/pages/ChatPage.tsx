import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { api } from '../api/http.js';
import { postSse } from '../api/sse.js';
import type { Chat, ChatMessage, ChatReference, ChatSession } from '../api/types.js';
import { Answer } from '../components/Answer.js';
import { ErrorMessage, Loading, PageHeader, TextArea, TextField } from '../components/ui.js';
import { useConfirmedAction, useLoad } from '../hooks.js';
import { Link } from '../router.js';
import { AnsweringModel } from '../components/AnsweringModel.js';
import { useDefaultModels } from '../models.js';

interface Frame {
  code: number;
  message: string;
  data: true | { answer: string; reasoning?: string; reference?: ChatReference | Record<string, never>; final?: boolean; session_id?: string };
}

/** A session is named after its first question, so the list tells sessions apart. */
const SESSION_NAME_CHARS = 60;

export function sessionNameOf(question: string): string {
  const flat = question.replace(/\s+/g, ' ').trim();
  return flat.length > SESSION_NAME_CHARS ? `${flat.slice(0, SESSION_NAME_CHARS - 1)}…` : flat;
}

/**
 * The conversation shown: a stored session (`id`), or a new one that is created with its first question.
 * `key` changes only when the user picks another conversation, so a new session's first answer keeps streaming
 * while it gets its id.
 */
interface Shown {
  id?: string;
  key: number;
}

export function ChatPage({ chatId }: { chatId: string }) {
  const chat = useLoad((signal) => api.get<Chat>(`/chats/${chatId}`, undefined, signal), [chatId]);
  const sessions = useLoad((signal) => api.get<ChatSession[]>(`/chats/${chatId}/sessions`, { page_size: 100, orderby: 'update_time' }, signal), [chatId]);
  const [shown, setShown] = useState<Shown>({ key: 0 });
  const action = useConfirmedAction(sessions.reload);
  const defaults = useDefaultModels();
  const answering = chat.data?.llm_id || defaults.data?.chat_model;
  const sessionId = shown.id;

  // On arrival the most recent session is shown; with none, a new one that takes a question at once.
  useEffect(() => {
    if (shown.key === 0 && !shown.id && sessions.data?.length) setShown({ id: sessions.data[0]!.id, key: 1 });
  }, [sessions.data, shown]);

  const show = (id: string | undefined) => setShown((s) => ({ id, key: s.key + 1 }));
  const started = (id: string) => {
    setShown((s) => ({ ...s, id }));
    sessions.reload();
  };

  const remove = (s: ChatSession) =>
    action.confirmThenRun(`Delete the session "${s.name}"?`, async () => {
      await api.delete(`/chats/${chatId}/sessions`, { ids: [s.id] });
      if (s.id === sessionId) show(undefined);
    });

  return (
    <>
      <PageHeader title={chat.data?.name ?? 'Chat'} back={{ to: '/chats', label: 'Chat assistants' }}>
        <Link to={`/chats/${chatId}/settings`} className="button">
          Configure
        </Link>
      </PageHeader>
      <ErrorMessage error={chat.error ?? sessions.error ?? action.error} />
      {chat.data && answering && <AnsweringModel models={[answering]} what="chat" />}
      <div className="chat-layout">
        <nav aria-label="Sessions">
          <button type="button" className="primary" onClick={() => show(undefined)} disabled={action.busy || (!sessionId && shown.key > 0)}>
            New session
          </button>
          <ul className="session-list">
            {sessions.data?.map((s) => (
              <li key={s.id}>
                <button type="button" aria-current={s.id === sessionId} onClick={() => show(s.id)}>
                  {s.name}
                </button>
                <button type="button" className="danger" onClick={() => remove(s)} aria-label={`Delete session ${s.name}`}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        </nav>
        <section aria-label="Conversation">
          {chat.data && sessions.data && (sessionId || shown.key > 0 || sessions.data.length === 0) ? (
            <Conversation key={shown.key} chat={chat.data} sessionId={sessionId} onStarted={started} onAnswered={sessions.reload} />
          ) : (
            <Loading />
          )}
        </section>
      </div>
    </>
  );
}

function Conversation({ chat, sessionId, onStarted, onAnswered }: { chat: Chat; sessionId?: string; onStarted: (id: string) => void; onAnswered: () => void }) {
  // The session shown when this conversation opened: a new one gets its id with its first question, without reloading.
  const [openedWith] = useState(sessionId);
  const session = useLoad(
    (signal) => (openedWith ? api.get<ChatSession>(`/chats/${chat.id}/sessions/${openedWith}`, undefined, signal) : Promise.resolve(undefined)),
    [chat.id, openedWith],
  );
  const id = useRef(sessionId);
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [question, setQuestion] = useState('');
  const [streaming, setStreaming] = useState(false);
  const [error, setError] = useState<Error>();
  const variables = (chat.prompt_config.parameters ?? []).filter((p) => p.key !== 'knowledge');
  const [values, setValues] = useState<Record<string, string>>({});
  const abort = useRef<AbortController>(undefined);
  const end = useRef<HTMLLIElement>(null);

  useEffect(() => {
    if (session.data) setMessages(session.data.messages);
  }, [session.data]);
  useEffect(() => () => abort.current?.abort(), []);
  // Block body: scrollIntoView returns a promise in recent Chromium, which React would call as a cleanup.
  useEffect(() => {
    end.current?.scrollIntoView({ block: 'nearest' });
  }, [messages]);

  const ask = async (e?: FormEvent) => {
    e?.preventDefault();
    const q = question.trim();
    if (!q || streaming) return;
    setError(undefined);
    setQuestion('');
    setStreaming(true);
    setMessages((m) => [...m, { role: 'user', content: q }, { role: 'assistant', content: '' }]);
    const ctrl = new AbortController();
    abort.current = ctrl;
    const extra: Record<string, string> = {};
    for (const v of variables) if (values[v.key] !== undefined && values[v.key] !== '') extra[v.key] = values[v.key]!;
    const setLast = (patch: Partial<ChatMessage>) => setMessages((m) => [...m.slice(0, -1), { ...m.at(-1)!, ...patch }]);
    try {
      if (!id.current) {
        id.current = (await api.post<ChatSession>(`/chats/${chat.id}/sessions`, { name: sessionNameOf(q) })).id;
        onStarted(id.current);
      }
      for await (const frame of postSse(`/chats/${chat.id}/completions`, { ...extra, question: q, session_id: id.current, stream: true }, ctrl.signal) as AsyncGenerator<Frame>) {
        if (frame.code !== 0) throw new Error(frame.message || 'The answer failed');
        if (frame.data === true) break;
        const d = frame.data;
        setLast({
          content: d.answer,
          ...(d.reasoning ? { reasoning: d.reasoning } : {}),
          ...(d.reference && 'chunks' in d.reference ? { reference: d.reference as ChatReference } : {}),
        });
      }
      onAnswered();
    } catch (err) {
      if ((err as Error).name !== 'AbortError') setError(err as Error);
    } finally {
      setStreaming(false);
    }
  };

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      void ask();
    }
  };

  if (openedWith && !session.data) return session.error ? <ErrorMessage error={session.error} /> : <Loading />;
  return (
    <>
      <ol className="messages" aria-live="polite" aria-busy={streaming}>
        {messages
          .filter((m) => m.role !== 'system')
          .map((m, i, all) => (
            <li key={i} className={`message ${m.role}`} data-role={m.role}>
              <span className="sr-only">{m.role === 'user' ? 'You:' : 'Assistant:'}</span>
              {m.role === 'assistant' ? <Answer content={m.content} reasoning={m.reasoning} reference={m.reference} streaming={streaming && i === all.length - 1} /> : <div className="answer">{m.content}</div>}
            </li>
          ))}
        <li ref={end} aria-hidden="true" />
      </ol>
      <ErrorMessage error={error} />
      <form onSubmit={ask} aria-label="Ask a question">
        {variables.length > 0 && (
          <fieldset>
            <legend>Variables</legend>
            {variables.map((v) => (
              <TextField
                key={v.key}
                label={`${v.key}${v.optional ? ' (optional)' : ''}`}
                required={!v.optional}
                value={values[v.key] ?? ''}
                onChange={(e) => setValues({ ...values, [v.key]: e.target.value })}
              />
            ))}
          </fieldset>
        )}
        <div className="composer">
          <TextArea label="Your question" rows={2} value={question} onChange={(e) => setQuestion(e.target.value)} onKeyDown={onKey} hint="Enter sends; Shift+Enter adds a line." />
          {streaming ? (
            <button type="button" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          ) : (
            <button type="submit" className="primary" disabled={!question.trim()}>
              Send
            </button>
          )}
        </div>
      </form>
    </>
  );
}
