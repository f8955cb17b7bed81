import { isBuiltinModel } from '../models.js';
import { Link } from '../router.js';

/**
 * Which model answers here; with the built-in chat model, plainly what it is: a tiny offline model for
 * trying Cairn out, and where to add a real one.
 */
export function AnsweringModel({ models, what }: { models: string[]; what: 'chat' | 'agent' }) {
  if (!models.length) return null;
  const builtin = models.some(isBuiltinModel);
  return (
    <div className={`answering-model${builtin ? ' builtin' : ''}`} data-testid="answering-model">
      <span className="muted">{what === 'chat' ? 'Answers with' : 'Runs on'} </span>
      {models.map((m, i) => (
        <span key={m}>
          {i > 0 && ', '}
          <code>{m}</code>
        </span>
      ))}
      {builtin && (
        <p className="small" role="note">
          This is Cairn&apos;s built-in model: a tiny (135M-parameter) model that runs offline, for trying Cairn out. Its answers can be
          wrong or thin. For real answers, add a model in <Link to="/models">Model providers</Link> and choose it here.
        </p>
      )}
    </div>
  );
}
