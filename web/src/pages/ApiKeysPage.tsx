import { useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import { CopyButton } from '../components/CopyButton.js';
import { DataTable } from '../components/DataTable.js';
import { ListStatus } from '../components/ListStatus.js';
import { Dialog, PageHeader, TextField, formatTime } from '../components/ui.js';
import { useAction, useConfirmedAction, useLoad } from '../hooks.js';

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
  const revoke = useConfirmedAction(keys.reload);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const key = await create.run(() => api.post<{ token: string }>('/system/tokens', undefined, { name }));
    if (key) {
      setCreated(key.token);
      setName('');
      keys.reload();
    }
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
      <ListStatus list={keys} count={keys.data?.length} error={create.error ?? revoke.error} empty="No API keys yet." />
      {keys.data && keys.data.length > 0 && (
        <DataTable
          caption="API keys"
          rows={keys.data}
          rowKey={(k) => k.id}
          columns={[
            { label: 'Name', cell: (k) => k.name || '—' },
            { label: 'Key', cell: (k) => <code>{k.token}</code> },
            { label: 'Created', cell: (k) => formatTime(k.create_time) },
            { label: 'Last used', cell: (k) => formatTime(k.last_used_at) },
          ]}
          actions={(k) => (
            <button
              type="button"
              className="danger"
              onClick={() => revoke.confirmThenRun(`Revoke the key "${k.name || k.token}"? Programs using it stop working.`, () => api.delete(`/system/tokens/${k.id}`))}
              aria-label={`Revoke ${k.name || k.token}`}
            >
              Revoke
            </button>
          )}
        />
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
