import { useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import { useAuth } from '../auth.js';
import { DataTable } from '../components/DataTable.js';
import { ListStatus } from '../components/ListStatus.js';
import { ErrorMessage, PageHeader, SelectField, TextField, formatTime } from '../components/ui.js';
import { useConfirmedAction, useLoad } from '../hooks.js';

interface Tenant {
  tenant_id: string;
  name: string;
  role: string;
  owner_email: string;
}

interface Member {
  user_id: string;
  email: string;
  nickname: string;
  role: string;
  create_time: number;
}

export function MembersPage() {
  const { user } = useAuth();
  const tenants = useLoad((signal) => api.get<Tenant[]>('/tenants', undefined, signal), []);
  const [tenantId, setTenantId] = useState(user!.tenant_id);
  const tenant = tenants.data?.find((t) => t.tenant_id === tenantId);
  const members = useLoad((signal) => api.get<Member[]>(`/tenants/${tenantId}/users`, undefined, signal), [tenantId]);
  const [email, setEmail] = useState('');
  const action = useConfirmedAction(members.reload);
  const owner = tenant?.role === 'owner';

  const add = async (e: FormEvent) => {
    e.preventDefault();
    const ok = await action.run(() => api.post(`/tenants/${tenantId}/users`, { email }));
    if (ok !== undefined) {
      setEmail('');
      members.reload();
    }
  };

  return (
    <>
      <PageHeader title="Workspace members" />
      {tenants.data && tenants.data.length > 1 && (
        <SelectField
          label="Workspace"
          options={tenants.data.map((t) => ({ value: t.tenant_id, label: `${t.name} (${t.role})` }))}
          value={tenantId}
          onChange={(e) => setTenantId(e.target.value)}
        />
      )}
      <p className="muted">Members of a workspace see and manage its datasets and memories shared with the team.</p>
      {owner && (
        <form className="toolbar" onSubmit={add}>
          <TextField label="Member's email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} hint="The person must have signed up already." />
          <div className="field">
            <button type="submit" className="primary" disabled={action.busy}>
              Add member
            </button>
          </div>
        </form>
      )}
      <ErrorMessage error={tenants.error} />
      <ListStatus list={members} count={members.data?.length} error={action.error} empty="No members." />
      {members.data && members.data.length > 0 && (
        <DataTable
          caption={`Members of ${tenant?.name ?? 'the workspace'}`}
          rows={members.data}
          rowKey={(m) => m.user_id}
          columns={[
            { label: 'Name', cell: (m) => m.nickname },
            { label: 'Email', cell: (m) => m.email },
            { label: 'Role', cell: (m) => m.role },
            { label: 'Joined', cell: (m) => formatTime(m.create_time) },
          ]}
          actions={(m) =>
            owner &&
            m.role !== 'owner' && (
              <button
                type="button"
                className="danger"
                onClick={() => action.confirmThenRun(`Remove ${m.email} from ${tenant?.name}?`, () => api.delete(`/tenants/${tenantId}/users/${m.user_id}`))}
                aria-label={`Remove ${m.email}`}
              >
                Remove
              </button>
            )
          }
        />
      )}
    </>
  );
}
