import { useId, type ReactNode } from 'react';
import { Link } from '../router.js';

/** One item of a card grid (chat assistants, agents, memories): its name links to its page and labels the card. */
export function LinkCard({ title, to, children }: { title: string; to: string; children: ReactNode }) {
  const headingId = useId();
  return (
    <article className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>
        <Link to={to}>{title}</Link>
      </h2>
      {children}
    </article>
  );
}
