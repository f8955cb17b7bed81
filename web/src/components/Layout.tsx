import { useEffect, useState, type ReactNode } from 'react';
import { useAuth } from '../auth.js';
import { Link, useLocation } from '../router.js';

const NAV = [
  { to: '/datasets', label: 'Datasets' },
  { to: '/chats', label: 'Chat assistants' },
  { to: '/agents', label: 'Agents' },
  { to: '/memories', label: 'Memories' },
  { to: '/models', label: 'Model providers' },
  { to: '/keys', label: 'API keys' },
  { to: '/members', label: 'Members' },
];

/** The Temporal UI's address when the server reports one (healthz `temporal_ui`). */
function useTemporalUi(): string | undefined {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    fetch('/api/v1/system/healthz')
      .then((r) => r.json())
      .then((body) => typeof body?.temporal_ui === 'string' && setUrl(body.temporal_ui))
      .catch(() => undefined);
  }, []);
  return url;
}

export function Layout({ children }: { children: ReactNode }) {
  const { user, logout } = useAuth();
  const { path } = useLocation();
  const temporalUi = useTemporalUi();
  return (
    <div className="shell">
      <a href="#main" className="skip">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/datasets" className="brand">
          Cairn
        </Link>
        <div className="user">
          <span className="muted" title={user?.email}>
            {user?.nickname}
          </span>
          <button type="button" onClick={logout}>
            Log out
          </button>
        </div>
      </header>
      <nav className="sidebar" aria-label="Main">
        <ul>
          {NAV.map((n) => (
            <li key={n.to}>
              <Link to={n.to} aria-current={path === n.to || path.startsWith(n.to + '/') ? 'page' : undefined}>
                {n.label}
              </Link>
            </li>
          ))}
          {temporalUi && (
            <li>
              <a href={temporalUi} target="_blank" rel="noreferrer">
                Temporal UI <span className="sr-only">(opens in a new tab)</span>↗
              </a>
            </li>
          )}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
