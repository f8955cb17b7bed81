import { Fragment, useState } from 'react';
import type { ChatReference, ReferenceChunk } from '../api/types.js';
import { Link } from '../router.js';
import { Dialog } from './ui.js';

/**
 * An assistant answer: reasoning apart (collapsible), the answer text with its [ID:n] citations as
 * buttons that open the cited chunk.
 */
export function Answer({ content, reasoning, reference, streaming }: { content: string; reasoning?: string; reference?: ChatReference; streaming?: boolean }) {
  const [open, setOpen] = useState<ReferenceChunk>();
  const parts = content.split(/\[ID:(\d+)\]/);
  return (
    <>
      {reasoning && (
        <details className="reasoning-box" open={streaming && !content}>
          <summary>Reasoning</summary>
          <div className="reasoning" data-testid="reasoning">
            {reasoning}
          </div>
        </details>
      )}
      <div className="answer" data-testid="answer">
        {parts.map((part, i) => {
          if (i % 2 === 0) return <Fragment key={i}>{part}</Fragment>;
          const chunk = reference?.chunks[Number(part)];
          if (!chunk) return <Fragment key={i} />;
          return (
            <button key={i} type="button" className="citation" onClick={() => setOpen(chunk)} aria-label={`Source ${Number(part) + 1}: ${chunk.document_name}`}>
              {Number(part) + 1}
            </button>
          );
        })}
        {streaming && <span className="muted"> ▍</span>}
      </div>
      {reference && reference.doc_aggs?.length > 0 && !streaming && (
        <p className="small muted">Sources: {reference.doc_aggs.map((d) => d.doc_name).join(', ')}</p>
      )}
      <Dialog title={open ? `Source: ${open.document_name}` : 'Source'} open={Boolean(open)} onClose={() => setOpen(undefined)} wide>
        {open && (
          <>
            <p className="scores">
              <span>similarity {open.similarity.toFixed(3)}</span>
              <span>vector {open.vector_similarity.toFixed(3)}</span>
              <span>term {open.term_similarity.toFixed(3)}</span>
            </p>
            <p className="chunk-content" data-testid="cited-chunk">
              {open.content}
            </p>
            <Link to={`/datasets/${open.dataset_id}/documents/${open.document_id}`}>Open the document's chunks</Link>
          </>
        )}
      </Dialog>
    </>
  );
}
