import { useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import type { RetrievedChunk } from '../api/types.js';
import { DatasetHeader, useDataset } from '../components/DatasetTabs.js';
import { Highlighted } from '../components/Highlight.js';
import { ModelSelect } from '../components/ModelSelect.js';
import { MetadataFilter, toMetadataCondition, type MetadataFilterValue } from '../components/MetadataFilter.js';
import { CheckboxField, ErrorMessage, RangeField, SubmitButton, TextArea, TextField } from '../components/ui.js';
import { useAction } from '../hooks.js';

interface Result {
  total: number;
  chunks: RetrievedChunk[];
}

export function RetrievalPage({ datasetId }: { datasetId: string }) {
  const dataset = useDataset(datasetId);
  const [question, setQuestion] = useState('');
  const [threshold, setThreshold] = useState(0.2);
  const [weight, setWeight] = useState(0.3);
  const [topK, setTopK] = useState(1024);
  const [rerank, setRerank] = useState('');
  const [keyword, setKeyword] = useState(false);
  const [filter, setFilter] = useState<MetadataFilterValue>({ logic: 'and', conditions: [] });
  const [result, setResult] = useState<Result>();
  const { busy, error, run } = useAction();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await run(() =>
      api.post<Result>('/retrieval', {
        question,
        dataset_ids: [datasetId],
        similarity_threshold: threshold,
        vector_similarity_weight: weight,
        top_k: topK,
        rerank_id: rerank || null,
        keyword,
        highlight: true,
        metadata_condition: toMetadataCondition(filter) ?? null,
      }),
    );
    if (r) setResult(r);
  };

  if (dataset.error) return <DatasetHeader dataset={undefined} error={dataset.error} />;
  return (
    <>
      <DatasetHeader dataset={dataset.data} error={dataset.error} />
      <div className="two-col">
        <form onSubmit={submit} aria-label="Retrieval test">
          <TextArea label="Question" rows={3} required value={question} onChange={(e) => setQuestion(e.target.value)} />
          <RangeField label="Similarity threshold" min={0} max={1} step={0.01} value={threshold} onChange={setThreshold} hint="Chunks below this similarity are left out." />
          <RangeField
            label="Vector similarity weight"
            min={0}
            max={1}
            step={0.01}
            value={weight}
            onChange={setWeight}
            hint={`Similarity = ${weight.toFixed(2)} × vector + ${(1 - weight).toFixed(2)} × term similarity.`}
          />
          <TextField label="Top k" type="number" min={1} max={10000} value={topK} onChange={(e) => setTopK(Number(e.target.value))} hint="Candidates taken from each search before ranking." />
          <ModelSelect type="rerank" label="Rerank model" none="None (vector similarity)" value={rerank} onChange={setRerank} />
          <CheckboxField label="Add keywords from the chat model" hint="The workspace chat model extracts keywords from the question for the full-text search." checked={keyword} onChange={(e) => setKeyword(e.target.checked)} />
          <MetadataFilter value={filter} onChange={setFilter} />
          <ErrorMessage error={error} />
          <SubmitButton label="Run retrieval test" busy={busy} busyLabel="Searching…" />
        </form>
        <section aria-label="Retrieved chunks" aria-live="polite" aria-busy={busy}>
          {result && (
            <>
              <h2>
                {result.total} chunk{result.total === 1 ? '' : 's'} found
              </h2>
              {result.chunks.length === 0 && <p className="empty">Nothing above the similarity threshold: lower it or rephrase the question.</p>}
              <ol className="chunk-list">
                {result.chunks.map((c, i) => (
                  <li key={c.id} className="chunk" data-rank={i + 1}>
                    <div className="scores">
                      <span>
                        <strong>#{i + 1}</strong> similarity {c.similarity.toFixed(3)}
                      </span>
                      <span>vector {c.vector_similarity.toFixed(3)}</span>
                      <span>term {c.term_similarity.toFixed(3)}</span>
                      <span className="muted">{c.document_name}</span>
                    </div>
                    <p className="chunk-content">
                      <Highlighted text={c.highlight ?? c.content} />
                    </p>
                  </li>
                ))}
              </ol>
            </>
          )}
        </section>
      </div>
    </>
  );
}
