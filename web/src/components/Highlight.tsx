import { Fragment } from 'react';

/**
 * Retrieval's `highlight` marks matched terms with <em>…</em> in otherwise plain text. It is split
 * into text and <mark> elements, never set as HTML, so a chunk's own markup cannot run.
 */
export function Highlighted({ text }: { text: string }) {
  const parts = text.split(/<em>([\s\S]*?)<\/em>/);
  return (
    <>
      {parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : <Fragment key={i}>{part}</Fragment>))}
    </>
  );
}
