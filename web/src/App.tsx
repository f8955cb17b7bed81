import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { ErrorBoundary } from './components/ErrorBoundary.js';
import { AuthProvider, useAuth } from './auth.js';
import { Layout } from './components/Layout.js';
import { Loading } from './components/ui.js';
import { match, navigate, useLocation } from './router.js';
import { LoginPage } from './pages/LoginPage.js';
import { DatasetsPage } from './pages/DatasetsPage.js';
import { DatasetDocumentsPage } from './pages/DatasetDocumentsPage.js';
import { DatasetSettingsPage } from './pages/DatasetSettingsPage.js';
import { RetrievalPage } from './pages/RetrievalPage.js';
import { ChunksPage } from './pages/ChunksPage.js';
import { ApiKeysPage } from './pages/ApiKeysPage.js';
import { MembersPage } from './pages/MembersPage.js';
import { ModelsPage } from './pages/ModelsPage.js';
import { ChatsPage } from './pages/ChatsPage.js';
import { ChatSettingsPage } from './pages/ChatSettingsPage.js';
import { ChatPage } from './pages/ChatPage.js';
import { AgentsPage } from './pages/AgentsPage.js';
import { MemoriesPage } from './pages/MemoriesPage.js';
import { MemoryPage } from './pages/MemoryPage.js';

// The agent page draws canvases with @xyflow/react, the console's largest dependency: it loads when an
// agent is opened, so every other page's first load does without it.
const AgentPage = lazy(() => import('./pages/AgentPage.js').then((m) => ({ default: m.AgentPage })));

type Page = (params: Record<string, string>) => ReactNode;

/** Routes in match order. */
const ROUTES: [string, Page][] = [
  ['/datasets', () => <DatasetsPage />],
  ['/datasets/:id', (p) => <DatasetDocumentsPage datasetId={p.id!} />],
  ['/datasets/:id/settings', (p) => <DatasetSettingsPage datasetId={p.id!} />],
  ['/datasets/:id/retrieval', (p) => <RetrievalPage datasetId={p.id!} />],
  ['/datasets/:id/documents/:docId', (p) => <ChunksPage datasetId={p.id!} documentId={p.docId!} />],
  ['/chats', () => <ChatsPage />],
  ['/chats/:id', (p) => <ChatPage chatId={p.id!} />],
  ['/chats/:id/settings', (p) => <ChatSettingsPage chatId={p.id!} />],
  ['/agents', () => <AgentsPage />],
  ['/agents/:id', (p) => <AgentPage agentId={p.id!} />],
  ['/memories', () => <MemoriesPage />],
  ['/memories/:id', (p) => <MemoryPage memoryId={p.id!} />],
  ['/models', () => <ModelsPage />],
  ['/keys', () => <ApiKeysPage />],
  ['/members', () => <MembersPage />],
];

/** Only a path inside the console, never another origin. */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/datasets';
}

function Redirect({ to }: { to: string }) {
  useEffect(() => {
    navigate(to, { replace: true });
  }, [to]);
  return null;
}

function Routes() {
  const { user } = useAuth();
  const { path, search } = useLocation();
  const publicPage = path === '/login' || path === '/signup';
  if (!user) {
    if (!publicPage) return <Redirect to={`/login?next=${encodeURIComponent(path + location.search)}`} />;
    return <LoginPage mode={path === '/signup' ? 'signup' : 'login'} />;
  }
  if (publicPage || path === '/') return <Redirect to={safeNext(search.get('next'))} />;
  for (const [pattern, page] of ROUTES) {
    const params = match(pattern, path);
    if (params)
      return (
        <Layout>
          <ErrorBoundary key={path}>
            <Suspense fallback={<Loading />}>{page(params)}</Suspense>
          </ErrorBoundary>
        </Layout>
      );
  }
  return (
    <Layout>
      <h1>Page not found</h1>
      <p>Nothing lives at {path}.</p>
    </Layout>
  );
}

export function App() {
  return (
    <AuthProvider>
      <Routes />
    </AuthProvider>
  );
}
