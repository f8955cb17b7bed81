import { useEffect, useState } from 'react';
import { API_PREFIX, api } from '../api/http.js';
import type { AbridgedValue, AgentRun, AgentRunStep } from '../api/types.js';
import { useLoad, usePolling } from '../hooks.js';
import { ErrorMessage, formatBytes, formatTime } from './ui.js';

const seconds = (s: number | null | undefined) => (typeof s === 'number' ? `${s.toFixed(2)} s` : '—');

function isAbridged(v: unknown): v is AbridgedValue {
  return !!v && typeof v === 'object' && typeof (v as AbridgedValue).full_value === 'string' && typeof (v as AbridgedValue).size === 'number' && 'truncated' in v;
}

/** One key of a step's inputs or outputs: pretty JSON; an abridged value shows its size and loads in full on demand. */
function StepValue({ name, value }: { name: string; value: unknown }) {
  const [full, setFull] = useState<{ value: unknown } | undefined>();
  const [error, setError] = useState<Error>();
  const [loading, setLoading] = useState(false);
  const abridged = isAbridged(value) && !full;
  const load = async (link: string) => {
    setLoading(true);
    setError(undefined);
    try {
      // The link is absolute (`/api/v1/…`); the API client adds the prefix itself.
      setFull({ value: await api.get<unknown>(link.startsWith(API_PREFIX) ? link.slice(API_PREFIX.length) : link) });
    } catch (err) {
      setError(err as Error);
    } finally {
      setLoading(false);
    }
  };
  const shown = full ? full.value : value;
  return (
    <div className="run-value">
      <strong className="small">{name}</strong>
      {abridged ? (
        <>
          <span className="muted small"> (abridged: {formatBytes((value as AbridgedValue).size)}) </span>
          <button type="button" onClick={() => load((value as AbridgedValue).full_value)} disabled={loading}>
            {loading ? 'Loading…' : 'Load full value'}
          </button>
          <pre tabIndex={0} aria-label={`${name}, start`}>
            {(value as AbridgedValue).truncated}
          </pre>
        </>
      ) : (
        // Focusable: a long value scrolls, and the keyboard must reach it.
        <pre tabIndex={0} aria-label={name}>
          {typeof shown === 'string' ? shown : JSON.stringify(shown, null, 2)}
        </pre>
      )}
      <ErrorMessage error={error} />
    </div>
  );
}

function StepValues({ title, values }: { title: string; values: Record<string, unknown> | null }) {
  const entries = Object.entries(values ?? {});
  return (
    <section aria-label={title}>
      <h5>{title}</h5>
      {entries.length ? entries.map(([k, v]) => <StepValue key={k} name={k} value={v} />) : <p className="muted small">None</p>}
    </section>
  );
}

function StepDetail({ step, onReplay, replaying }: { step: AgentRunStep; onReplay: () => void; replaying: boolean }) {
  return (
    <div className="run-step-detail" data-testid="run-step-detail">
      {step.error && <p className="error-text">{step.error}</p>}
      <StepValues title={`Inputs of ${step.component_name}`} values={step.inputs} />
      <StepValues title={`Outputs of ${step.component_name}`} values={step.outputs} />
      <button type="button" onClick={onReplay} disabled={replaying}>
        Replay from here
      </button>
    </div>
  );
}

function triggerOf(run: AgentRun): string {
  return run.trigger === 'replay' ? `replay of ${run.replay_of ?? '?'}${run.from_component ? ` from ${run.from_component}` : ''}` : run.trigger;
}

/**
 * The runs of a session, newest first; a selected run lists its components in the order they ran, and the
 * selected component's inputs and outputs with a button to replay the run from it. `version` changes after
 * each turn streamed by the panel, to list the new run.
 */
export function AgentRuns({
  agentId,
  sessionId,
  version,
  selectedComponent,
  onSelectComponent,
  onReplay,
  replaying,
}: {
  agentId: string;
  sessionId: string;
  version: number;
  selectedComponent: string | undefined;
  onSelectComponent: (componentId: string | undefined) => void;
  onReplay: (runId: string, fromComponent: string) => void;
  replaying: boolean;
}) {
  const runs = useLoad((signal) => api.get<AgentRun[]>(`/agents/${agentId}/sessions/${sessionId}/runs`, { page_size: 30 }, signal), [agentId, sessionId, version]);
  // A run still recorded as running (its end is written just after its stream closes) is shown finishing.
  usePolling(runs, 1500, !replaying && !!runs.data?.some((r) => r.status === 'running'));
  const [runId, setRunId] = useState<string>();
  // Another session: its runs, none chosen yet.
  useEffect(() => setRunId(undefined), [sessionId]);
  // A component clicked on the canvas with no run open shows its step of the newest run.
  useEffect(() => {
    if (selectedComponent && !runId && runs.data?.length) setRunId(runs.data[0]!.id);
  }, [selectedComponent, runs.data]);
  const run = runs.data?.find((r) => r.id === runId);

  return (
    <section aria-labelledby="runs-title" className="agent-runs">
      <h3 id="runs-title">Runs of this session</h3>
      <ErrorMessage error={runs.error} />
      {runs.data && !runs.data.length && <p className="muted small">No runs yet.</p>}
      <ol className="runs-list" data-testid="runs-list">
        {runs.data?.map((r) => (
          <li key={r.id}>
            <button type="button" aria-current={r.id === runId} onClick={() => setRunId(r.id === runId ? undefined : r.id)} data-run-id={r.id}>
              <span className="badge">{r.status}</span> {formatTime(r.start_time)} · {seconds(r.elapsed_time)} · {triggerOf(r)}
            </button>
          </li>
        ))}
      </ol>
      {run && (
        <>
          <h4>Components of the run</h4>
          {run.error && <p className="error-text">{run.error}</p>}
          <ol className="run-steps" data-testid="run-steps">
            {run.steps.map((s, i) => {
              const selected = s.component_id === selectedComponent;
              return (
                <li key={`${s.component_id}-${i}`} className={selected ? 'selected' : undefined} data-component-id={s.component_id}>
                  <button type="button" aria-expanded={selected} onClick={() => onSelectComponent(selected ? undefined : s.component_id)}>
                    {s.component_name} ({s.component_type}) · {s.status}
                    {s.reused ? ' · reused' : ''} · {seconds(s.elapsed_time)}
                  </button>
                  {selected && <StepDetail step={s} replaying={replaying} onReplay={() => onReplay(run.id, s.component_id)} />}
                </li>
              );
            })}
          </ol>
          {selectedComponent && !run.steps.some((s) => s.component_id === selectedComponent) && <p className="muted small">{selectedComponent} did not run in this run.</p>}
        </>
      )}
    </section>
  );
}
