import { useEffect, useId, type ReactNode } from 'react';
import { api } from '../api/http.js';
import { DATAFLOW_CANVAS, type Agent } from '../api/types.js';
import { useLoad } from '../hooks.js';
import { Link } from '../router.js';
import { ErrorMessage, SelectField, type Option } from './ui.js';

/**
 * How a dataset ingests its documents: a chunk method (`children`: its fields) or one of the workspace's
 * ingestion pipelines (dataflow canvases), chosen in a select. The first pipeline is chosen once the list
 * arrives; a current pipeline the list lacks stays shown as chosen.
 */
export function IngestionChoice({
  usePipeline,
  onUsePipeline,
  pipelineId,
  onPipeline,
  children,
}: {
  usePipeline: boolean;
  onUsePipeline: (use: boolean) => void;
  pipelineId: string;
  onPipeline: (id: string) => void;
  children: ReactNode;
}) {
  const pipelines = useLoad(
    (signal) => api.get<{ canvas: Agent[] }>('/agents', { canvas_category: DATAFLOW_CANVAS, page_size: 100 }, signal),
    [],
  );
  const options: Option[] = (pipelines.data?.canvas ?? []).map((a) => ({ value: a.id, label: a.title }));
  if (pipelineId && !options.some((o) => o.value === pipelineId)) options.unshift({ value: pipelineId, label: pipelineId });
  const first = options[0]?.value;
  const id = useId();
  useEffect(() => {
    if (usePipeline && !pipelineId && first) onPipeline(first);
    // onPipeline is the caller's setter: only a new list or a new mode chooses again.
  }, [usePipeline, pipelineId, first]);
  return (
    <>
      <fieldset>
        <legend>Ingest documents with</legend>
        <div className="field checkbox">
          <input id={`${id}-method`} type="radio" name={id} checked={!usePipeline} onChange={() => onUsePipeline(false)} />
          <label htmlFor={`${id}-method`}>A chunk method</label>
        </div>
        <div className="field checkbox">
          <input id={`${id}-pipeline`} type="radio" name={id} checked={usePipeline} onChange={() => onUsePipeline(true)} />
          <label htmlFor={`${id}-pipeline`}>An ingestion pipeline</label>
          <small className="muted">Its steps (parser, chunker, extractors, tokenizer) run on each document.</small>
        </div>
      </fieldset>
      {!usePipeline ? (
        children
      ) : (
        <>
          <SelectField
            label="Ingestion pipeline"
            options={options}
            value={pipelineId}
            required
            onChange={(e) => onPipeline(e.target.value)}
            hint={
              pipelines.data && options.length === 0 ? (
                <>
                  No ingestion pipelines yet: create one from a pipeline template in <Link to="/agents">Agents</Link>.
                </>
              ) : undefined
            }
          />
          <ErrorMessage error={pipelines.error} />
        </>
      )}
    </>
  );
}
