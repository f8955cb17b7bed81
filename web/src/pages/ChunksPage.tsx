import { useEffect, useState } from 'react';
import { api } from '../api/http.js';
import type { Chunk, Doc } from '../api/types.js';
import { FormDialog } from '../components/FormDialog.js';
import { ListStatus } from '../components/ListStatus.js';
import { CheckboxField, PageHeader, Pager, TextArea, TextField, countOf } from '../components/ui.js';
import { useAction, useConfirmedAction, useDebounced, useLoad } from '../hooks.js';

const PAGE_SIZE = 30;

export function ChunksPage({ datasetId, documentId }: { datasetId: string; documentId: string }) {
  const [page, setPage] = useState(1);
  const [keywords, setKeywords] = useState('');
  const searched = useDebounced(keywords);
  const [editing, setEditing] = useState<Chunk | 'new'>();
  const base = `/datasets/${datasetId}/documents/${documentId}/chunks`;
  const list = useLoad((signal) => api.get<{ total: number; chunks: Chunk[]; doc: Doc }>(base, { page, page_size: PAGE_SIZE, keywords: searched }, signal), [base, page, searched]);
  const action = useConfirmedAction(list.reload);
  /** The switch moves at once; the list's next answer replaces these. */
  const [availability, setAvailability] = useState<Record<string, boolean>>({});
  useEffect(() => {
    setAvailability({});
  }, [list.data]);
  const available = (c: Chunk) => availability[c.id] ?? c.available;

  const toggle = async (c: Chunk) => {
    const next = !available(c);
    setAvailability((a) => ({ ...a, [c.id]: next }));
    await action.run(() => api.patch(`${base}/${c.id}`, { available: next }));
    list.reload();
  };

  const doc = list.data?.doc;
  return (
    <>
      <PageHeader title={doc ? `Chunks of ${doc.name}` : 'Chunks'} back={{ to: `/datasets/${datasetId}`, label: 'Documents' }}>
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          Add a chunk
        </button>
      </PageHeader>
      {doc && (
        <p className="muted">
          {countOf(doc.chunk_count, 'chunk')} · {countOf(doc.token_count, 'token')} · {doc.chunk_method} · {doc.run}
        </p>
      )}
      <div className="toolbar">
        <TextField label="Search chunks" type="search" value={keywords} onChange={(e) => (setKeywords(e.target.value), setPage(1))} />
      </div>
      <ListStatus list={list} count={list.data?.chunks.length} error={action.error} empty={keywords ? 'No chunk matches.' : 'No chunks: parse the document or add one.'} />
      <ol className="chunk-list">
        {list.data?.chunks.map((c, i) => (
          <li key={c.id} className={`chunk${available(c) ? '' : ' disabled'}`}>
            <div className="chunk-meta">
              <strong>#{(page - 1) * PAGE_SIZE + i + 1}</strong>
              <CheckboxField label="Enabled" checked={available(c)} onChange={() => toggle(c)} />
              <button type="button" onClick={() => setEditing(c)} aria-label={`Edit chunk ${(page - 1) * PAGE_SIZE + i + 1}`}>
                Edit
              </button>
              <button type="button" className="danger" onClick={() => action.confirmThenRun('Delete this chunk?', () => api.delete(base, { chunk_ids: [c.id] }))} aria-label={`Delete chunk ${(page - 1) * PAGE_SIZE + i + 1}`}>
                Delete
              </button>
            </div>
            <p className="chunk-content">{c.content}</p>
            {c.important_keywords.length > 0 && <p className="small">Keywords: {c.important_keywords.join(', ')}</p>}
            {c.questions.length > 0 && <p className="small">Questions: {c.questions.join(' · ')}</p>}
          </li>
        ))}
      </ol>
      {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={setPage} />}
      {editing && (
        <ChunkDialog
          base={base}
          chunk={editing === 'new' ? undefined : editing}
          onClose={(saved) => {
            setEditing(undefined);
            if (saved) list.reload();
          }}
        />
      )}
    </>
  );
}

const splitList = (text: string, sep: RegExp) => text.split(sep).map((s) => s.trim()).filter(Boolean);

function ChunkDialog({ base, chunk, onClose }: { base: string; chunk?: Chunk; onClose: (saved: boolean) => void }) {
  const [content, setContent] = useState(chunk?.content ?? '');
  const [keywords, setKeywords] = useState(chunk?.important_keywords.join(', ') ?? '');
  const [questions, setQuestions] = useState(chunk?.questions.join('\n') ?? '');
  const { busy, error, run } = useAction();

  const submit = async () => {
    const body = { content, important_keywords: splitList(keywords, /,/), questions: splitList(questions, /\n/) };
    const ok = await run(() => (chunk ? api.patch(`${base}/${chunk.id}`, body) : api.post(base, body)));
    if (ok !== undefined) onClose(true);
  };

  return (
    <FormDialog title={chunk ? 'Edit chunk' : 'Add a chunk'} onClose={() => onClose(false)} onSubmit={submit} busy={busy} error={error} submitLabel={chunk ? 'Save chunk' : 'Add chunk'} wide>
      <TextArea label="Content" rows={8} required value={content} onChange={(e) => setContent(e.target.value)} />
      <TextField label="Keywords" hint="Comma-separated." value={keywords} onChange={(e) => setKeywords(e.target.value)} />
      <TextArea label="Questions" hint="One per line; they are embedded with the chunk." rows={3} value={questions} onChange={(e) => setQuestions(e.target.value)} />
    </FormDialog>
  );
}
