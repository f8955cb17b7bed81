import { useRef, useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import { postSse } from '../api/sse.js';
import type { Agent } from '../api/types.js';
import type { NodeState } from './AgentCanvas.js';
import { toolNodesOf } from '../agent-graph.js';
import { AgentRuns } from './AgentRuns.js';
import { Answer } from './Answer.js';
import { ErrorMessage, TextArea, TextField } from './ui.js';

interface Envelope {
  event?: string;
  session_id?: string;
  data: any;
  code?: number;
  message?: string;
}

interface LoggedEvent {
  key: number;
  text: string;
  failed?: boolean;
}

type BeginInput = { key?: string; name?: string; type?: string; optional?: boolean };

/** What a Retrieval tool call found, from its `tool_finished` event. */
interface Retrieved {
  key: string;
  query: string;
  chunks: { id: string; document_name: string; content: string }[];
}

/**
 * Runs the agent one turn at a time over SSE and lists each component's events as they arrive;
 * the answer streams below. A tool call lights the Agent's Tool node and lists what it retrieved.
 * Turns after the first continue the same session. Below, the session's runs: a run's components with
 * their inputs and outputs, and a replay from one of them, streamed here like a turn.
 */
export function AgentRunPanel({
  agent,
  sessionId,
  onSession,
  onStates,
  selectedComponent,
  onSelectComponent,
}: {
  agent: Agent;
  sessionId: string | undefined;
  onSession: (id: string | undefined) => void;
  onStates: (update: (s: Record<string, NodeState>) => Record<string, NodeState>) => void;
  selectedComponent: string | undefined;
  onSelectComponent: (componentId: string | undefined) => void;
}) {
  const inputs = Object.entries((agent.dsl.components.begin?.obj.params.inputs ?? {}) as Record<string, BeginInput>);
  const [values, setValues] = useState<Record<string, string>>({});
  const [question, setQuestion] = useState('');
  const [events, setEvents] = useState<LoggedEvent[]>([]);
  const [answer, setAnswer] = useState({ content: '', reasoning: '' });
  const [retrieved, setRetrieved] = useState<Retrieved[]>([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<Error>();
  /** Bumped when a streamed run ends, so the runs list shows it. */
  const [runsVersion, setRunsVersion] = useState(0);
  const ctrl = useRef<AbortController>(undefined);
  const currentSession = useRef<string | undefined>(sessionId);
  currentSession.current = sessionId;

  const log = (text: string, failed?: boolean) => setEvents((e) => [...e, { key: e.length, text, failed }]);

  const handle = (env: Envelope) => {
    if (env.code !== undefined && env.event === undefined) throw new Error(env.message || 'The run failed');
    if (env.session_id && env.session_id !== currentSession.current) {
      currentSession.current = env.session_id;
      onSession(env.session_id);
    }
    const d = env.data ?? {};
    switch (env.event) {
      case 'message':
        if (d.start_to_think || d.end_to_think) return;
        setAnswer((a) => (d.reasoning ? { ...a, reasoning: a.reasoning + String(d.reasoning) } : { ...a, content: a.content + String(d.content ?? '') }));
        return;
      case 'node_started':
        onStates((s) => ({ ...s, [d.component_id]: 'running' }));
        log(`▶ ${d.component_name} (${d.component_type}) started${d.reused ? ' (reused from the replayed run)' : ''}`);
        return;
      case 'node_finished':
        onStates((s) => ({ ...s, [d.component_id]: d.error ? 'failed' : 'finished' }));
        log(`${d.error ? '✕' : '✓'} ${d.component_name} finished in ${Number(d.elapsed_time ?? 0).toFixed(2)} s${d.error ? `: ${d.error}` : ''}`, Boolean(d.error));
        return;
      case 'tool_started': {
        const tools = toolNodesOf(agent.dsl, d.component_id);
        onStates((s) => ({ ...s, ...Object.fromEntries(tools.map((id) => [id, 'running' as const])) }));
        log(`▶ Tool ${d.tool_name} called: ${JSON.stringify(d.arguments ?? {})}`);
        return;
      }
      case 'tool_finished': {
        const tools = toolNodesOf(agent.dsl, d.component_id);
        onStates((s) => ({ ...s, ...Object.fromEntries(tools.map((id) => [id, d.error ? ('failed' as const) : ('finished' as const)])) }));
        log(`${d.error ? '✕' : '✓'} Tool ${d.tool_name}: ${d.result} (${Number(d.elapsed_time ?? 0).toFixed(2)} s)`, Boolean(d.error));
        if (d.retrieved) setRetrieved((r) => [...r, { key: String(d.tool_call_id), query: String(d.arguments?.query ?? ''), chunks: d.retrieved.chunks ?? [] }]);
        return;
      }
      case 'user_inputs':
        log(`… waiting for your input${d.tips ? `: ${d.tips}` : ''}`);
        return;
      case 'workflow_started':
        log('Run started');
        return;
      case 'workflow_finished':
        log(`Run finished${d.elapsed_time !== undefined ? ` in ${Number(d.elapsed_time).toFixed(2)} s` : ''}`);
        return;
      case 'message_end':
        return;
      default:
        log(String(env.event));
    }
  };

  /** Streams one run (a turn or a replay) into the panel: events, canvas states, the answer. */
  const stream = async (path: string, body: Record<string, unknown>): Promise<boolean> => {
    setError(undefined);
    setEvents([]);
    setAnswer({ content: '', reasoning: '' });
    setRetrieved([]);
    onStates(() => ({}));
    setRunning(true);
    const controller = new AbortController();
    ctrl.current = controller;
    try {
      for await (const env of postSse(path, body, controller.signal) as AsyncGenerator<Envelope>) handle(env);
      return true;
    } catch (err) {
      if ((err as Error).name !== 'AbortError') setError(err as Error);
      return false;
    } finally {
      setRunning(false);
      setRunsVersion((v) => v + 1);
    }
  };

  const run = async (e: FormEvent) => {
    e.preventDefault();
    const beginInputs = Object.fromEntries(inputs.filter(([key]) => values[key] !== undefined).map(([key, def]) => [key, { type: def.type ?? 'line', value: values[key] }]));
    const ok = await stream('/agents/chat/completions', {
      agent_id: agent.id,
      query: question,
      stream: true,
      ...(currentSession.current ? { session_id: currentSession.current } : {}),
      ...(Object.keys(beginInputs).length ? { inputs: beginInputs } : {}),
    });
    if (ok) setQuestion('');
  };

  const replay = (runId: string, fromComponent: string) => {
    if (!currentSession.current) return;
    log(`Replaying run ${runId} from ${fromComponent}`);
    void stream(`/agents/${agent.id}/sessions/${currentSession.current}/runs/${runId}/replay`, { from_component: fromComponent, stream: true });
  };

  /** Closing the stream does not stop the run: cancel the session's task too. */
  const stop = async () => {
    ctrl.current?.abort();
    if (currentSession.current) await api.post(`/tasks/${currentSession.current}/cancel`).catch((err: Error) => setError(err));
    log('Stopped');
  };

  return (
    <section className="run-panel" aria-labelledby="run-title">
      <h2 id="run-title">Run</h2>
      <p className="small muted">
        {sessionId ? 'Continuing the selected session. ' : 'A new session starts with the first turn. '}
        {sessionId && (
          <button type="button" onClick={() => onSession(undefined)}>
            Start a new session
          </button>
        )}
      </p>
      <form onSubmit={run}>
        {!sessionId &&
          inputs.map(([key, def]) => (
            <TextField
              key={key}
              label={`${def.name ?? key}${def.optional ? ' (optional)' : ''}`}
              required={!def.optional}
              value={values[key] ?? ''}
              onChange={(e) => setValues({ ...values, [key]: e.target.value })}
            />
          ))}
        <TextArea label="Message to the agent" rows={3} value={question} onChange={(e) => setQuestion(e.target.value)} />
        <div className="form-actions">
          {running ? (
            <button type="button" onClick={stop}>
              Stop
            </button>
          ) : (
            <button type="submit" className="primary">
              Run
            </button>
          )}
        </div>
      </form>
      <ErrorMessage error={error} />
      <h3>Events</h3>
      <ol className="events" aria-live="polite" data-testid="run-events">
        {events.length === 0 && <li className="muted">No run yet.</li>}
        {events.map((ev) => (
          <li key={ev.key} className={ev.failed ? 'error-text' : undefined}>
            {ev.text}
          </li>
        ))}
      </ol>
      {retrieved.length > 0 && (
        <>
          <h3>Retrieved</h3>
          <ul className="retrieved" data-testid="retrieved">
            {retrieved.map((r) => (
              <li key={r.key}>
                <span className="muted">Search: “{r.query}” · {r.chunks.length ? `${r.chunks.length} shown` : 'nothing found'}</span>
                <ol>
                  {r.chunks.map((c) => (
                    <li key={c.id}>
                      <strong>{c.document_name}</strong> <span className="chunk-content">{c.content}</span>
                    </li>
                  ))}
                </ol>
              </li>
            ))}
          </ul>
        </>
      )}
      <h3>Answer</h3>
      <div className="message assistant">{answer.content || answer.reasoning ? <Answer content={answer.content} reasoning={answer.reasoning} streaming={running} /> : <span className="muted">—</span>}</div>
      {sessionId && (
        <AgentRuns
          agentId={agent.id}
          sessionId={sessionId}
          version={runsVersion}
          selectedComponent={selectedComponent}
          onSelectComponent={onSelectComponent}
          onReplay={replay}
          replaying={running}
        />
      )}
    </section>
  );
}
