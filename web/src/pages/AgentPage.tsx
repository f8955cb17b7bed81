import { useState } from 'react';
import { api } from '../api/http.js';
import { DATAFLOW_CANVAS, type Agent, type AgentSession, type Dsl } from '../api/types.js';
import { AgentCanvas, type NodeState } from '../components/AgentCanvas.js';
import { AgentRunPanel } from '../components/AgentRunPanel.js';
import { AnsweringModel } from '../components/AnsweringModel.js';
import { agentModels, useDefaultModels } from '../models.js';
import { ListStatus } from '../components/ListStatus.js';
import { ErrorMessage, Loading, Notice, PageHeader, SubmitButton, TextArea, formatTime } from '../components/ui.js';
import { useAction, useConfirmedAction, useLoad } from '../hooks.js';
import { Link } from '../router.js';

type View = 'canvas' | 'dsl' | 'sessions';

export function AgentPage({ agentId }: { agentId: string }) {
  const agent = useLoad((signal) => api.get<Agent>(`/agents/${agentId}`, undefined, signal), [agentId]);
  const [view, setView] = useState<View>('canvas');
  const [states, setStates] = useState<Record<string, NodeState>>({});
  const [sessionId, setSessionId] = useState<string>();
  /** The component clicked on the canvas or in the run panel's list of a run's components. */
  const [selectedComponent, setSelectedComponent] = useState<string>();
  const defaults = useDefaultModels();
  // An ingestion pipeline runs on documents, not as an agent: its canvas is shown, with no run panel or sessions.
  const pipeline = agent.data?.canvas_category === DATAFLOW_CANVAS;

  return (
    <>
      <PageHeader title={agent.data?.title ?? 'Agent'} back={{ to: '/agents', label: 'Agents' }} />
      <ErrorMessage error={agent.error} />
      {agent.data?.description && <p className="muted">{agent.data.description}</p>}
      {pipeline ? (
        <PipelineNote datasets={agent.data?.datasets ?? []} />
      ) : (
        agent.data && defaults.data?.chat_model && <AnsweringModel models={agentModels(agent.data.dsl, defaults.data.chat_model)} what="agent" />
      )}
      <div className="tabs" role="tablist" aria-label="Agent views">
        {(pipeline ? (['canvas', 'dsl'] as const) : (['canvas', 'dsl', 'sessions'] as const)).map((v) => (
          <button key={v} type="button" role="tab" aria-selected={view === v} className={view === v ? 'tab current' : 'tab'} onClick={() => setView(v)}>
            {v === 'canvas' ? 'Canvas' : v === 'dsl' ? 'DSL (JSON)' : 'Sessions'}
          </button>
        ))}
      </div>
      {!agent.data ? (
        !agent.error && <Loading />
      ) : (
        <div className={pipeline ? undefined : 'agent-layout'}>
          <div role="tabpanel" aria-label={view}>
            {view === 'canvas' && (
              <AgentCanvas dsl={agent.data.dsl} states={states} agentId={agent.data.id} selected={selectedComponent} onSelect={pipeline ? undefined : setSelectedComponent} />
            )}
            {view === 'dsl' && <DslEditor agent={agent.data} onSaved={agent.reload} />}
            {view === 'sessions' && !pipeline && <Sessions agentId={agentId} current={sessionId} onOpen={(id) => setSessionId(id)} />}
          </div>
          {!pipeline && (
            <AgentRunPanel
              agent={agent.data}
              sessionId={sessionId}
              onSession={setSessionId}
              onStates={setStates}
              selectedComponent={selectedComponent}
              onSelectComponent={setSelectedComponent}
            />
          )}
        </div>
      )}
    </>
  );
}

function PipelineNote({ datasets }: { datasets: { id: string; name: string }[] }) {
  return (
    <p className="muted" data-testid="pipeline-note">
      <span className="badge">Ingestion pipeline</span> It runs on the documents of the datasets that ingest through it, not as an agent.{' '}
      {datasets.length ? (
        <>
          Used by{' '}
          {datasets.map((d, i) => (
            <span key={d.id}>
              {i > 0 && ', '}
              <Link to={`/datasets/${d.id}`}>{d.name}</Link>
            </span>
          ))}
          .
        </>
      ) : (
        'No dataset uses it yet: choose it when creating a dataset.'
      )}
    </p>
  );
}

function DslEditor({ agent, onSaved }: { agent: Agent; onSaved: () => void }) {
  const [text, setText] = useState(() => JSON.stringify(agent.dsl, null, 2));
  const [parseError, setParseError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const { busy, error, run } = useAction();

  const save = async () => {
    setSaved(false);
    let dsl: Dsl;
    try {
      dsl = JSON.parse(text);
    } catch (err) {
      setParseError(`The DSL is not valid JSON: ${(err as Error).message}`);
      return;
    }
    setParseError(undefined);
    const ok = await run(() => api.put(`/agents/${agent.id}`, { dsl }));
    if (ok !== undefined) {
      setSaved(true);
      onSaved();
    }
  };

  return (
    <div>
      <TextArea
        label="Agent DSL"
        className="mono dsl-editor"
        rows={24}
        spellCheck={false}
        value={text}
        onChange={(e) => (setText(e.target.value), setSaved(false))}
        hint="The server validates the DSL on save and names what is wrong."
      />
      <ErrorMessage error={parseError ?? error} />
      {saved && <Notice>DSL saved.</Notice>}
      <div className="form-actions">
        <button type="button" onClick={() => setText(JSON.stringify(agent.dsl, null, 2))}>
          Revert
        </button>
        <SubmitButton label="Validate and save" busy={busy} onClick={save} />
      </div>
    </div>
  );
}

function Sessions({ agentId, current, onOpen }: { agentId: string; current?: string; onOpen: (id: string) => void }) {
  const sessions = useLoad((signal) => api.get<AgentSession[]>(`/agents/${agentId}/sessions`, { dsl: false, page_size: 50 }, signal), [agentId, current]);
  const action = useConfirmedAction(sessions.reload);
  const remove = (s: AgentSession) => action.confirmThenRun('Delete this session?', () => api.delete(`/agents/${agentId}/sessions/${s.id}`));
  return (
    <section aria-label="Sessions">
      <ListStatus list={sessions} count={sessions.data?.length} error={action.error} empty="No sessions yet: run the agent." />
      <ul className="chunk-list">
        {sessions.data?.map((s) => (
          <li key={s.id} className="chunk">
            <div className="chunk-meta">
              <strong>{s.name || s.id}</strong>
              <span className="muted">
                {s.message.length} messages · {formatTime(s.update_time)}
              </span>
              <button type="button" onClick={() => onOpen(s.id)} aria-current={s.id === current} aria-label={`Continue session ${s.name || s.id}`}>
                {s.id === current ? 'Current' : 'Continue'}
              </button>
              <button type="button" className="danger" onClick={() => remove(s)} aria-label={`Delete session ${s.name || s.id}`}>
                Delete
              </button>
            </div>
            <ol className="messages">
              {s.message.slice(-4).map((m, i) => (
                <li key={i} className={`message ${m.role}`}>
                  <span className="sr-only">{m.role}:</span>
                  <div className="answer">{m.content}</div>
                </li>
              ))}
            </ol>
          </li>
        ))}
      </ul>
    </section>
  );
}
