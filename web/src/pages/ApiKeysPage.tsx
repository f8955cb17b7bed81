import { useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import { CopyButton } from '../components/CopyButton.js';
import { Dialog, ErrorMessage, Loading, PageHeader, TextField, formatTime } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';

interface ApiKey {
  id: string;
  name: string;
  token: string;
  create_time: number;
  last_used_at: number | null;
}

export function ApiKeysPage() {
  const keys = useLoad((signal) => api.get<ApiKey[]>('/system/tokens', undefined, signal), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<string>();
  const create = useAction();
  const revoke = useAction();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const key = await create.run(() => api.post<{ token: string }>('/system/tokens', undefined, { name }));
    if (key) {
      setCreated(key.token);
      setName('');
      keys.reload();
    }
  };

  const remove = async (k: ApiKey) => {
    if (!confirm(`Revoke the key "${k.name || k.token}"? Programs using it stop working.`)) return;
    await revoke.run(() => api.delete(`/system/tokens/${k.id}`));
    keys.reload();
  };

  return (
    <>
      <PageHeader title="API keys" />
      <p className="muted">Programs (the Python client, curl, RAGFlow clients) authenticate with an API key: <code>Authorization: Bearer &lt;key&gt;</code>.</p>
      <form className="toolbar" onSubmit={submit}>
        <TextField label="Key name" placeholder="e.g. laptop" maxLength={255} value={name} onChange={(e) => setName(e.target.value)} />
        <div className="field">
          <button type="submit" className="primary" disabled={create.busy}>
            Create API key
          </button>
        </div>
      </form>
      <ErrorMessage error={create.error ?? revoke.error ?? keys.error} />
      {!keys.data && keys.loading && <Loading />}
      {keys.data?.length === 0 && <p className="empty">No API keys yet.</p>}
      {keys.data && keys.data.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.map((k) => (
                <tr key={k.id}>
                  <td data-label="Name">{k.name || '—'}</td>
                  <td data-label="Key">
                    <code>{k.token}</code>
                  </td>
                  <td data-label="Created">{formatTime(k.create_time)}</td>
                  <td data-label="Last used">{formatTime(k.last_used_at)}</td>
                  <td className="row-actions">
                    <button type="button" className="danger" onClick={() => remove(k)} aria-label={`Revoke ${k.name || k.token}`}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Dialog title="Your new API key" open={Boolean(created)} onClose={() => setCreated(undefined)}>
        <p>Copy it now: it is shown only once.</p>
        <code className="key-token" data-testid="new-api-key">
          {created}
        </code>
        <div className="form-actions">
          <CopyButton text={created ?? ''} label="Copy key" />
          <button type="button" className="primary" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      </Dialog>
    </>
  );
}
