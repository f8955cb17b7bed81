import { useState, type FormEvent } from 'react';
import { api } from '../api/http.js';
import { useAuth } from '../auth.js';
import { ErrorMessage, Loading, PageHeader, SelectField, TextField, formatTime } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';

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
  const action = useAction();
  const owner = tenant?.role === 'owner';

  const add = async (e: FormEvent) => {
    e.preventDefault();
    const ok = await action.run(() => api.post(`/tenants/${tenantId}/users`, { email }));
    if (ok !== undefined) {
      setEmail('');
      members.reload();
    }
  };

  const remove = async (m: Member) => {
    if (!confirm(`Remove ${m.email} from ${tenant?.name}?`)) return;
    await action.run(() => api.delete(`/tenants/${tenantId}/users/${m.user_id}`));
    members.reload();
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
      <ErrorMessage error={action.error ?? members.error ?? tenants.error} />
      {!members.data && members.loading && <Loading />}
      {members.data && (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Members of {tenant?.name}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.data.map((m) => (
                <tr key={m.user_id}>
                  <td data-label="Name">{m.nickname}</td>
                  <td data-label="Email">{m.email}</td>
                  <td data-label="Role">{m.role}</td>
                  <td data-label="Joined">{formatTime(m.create_time)}</td>
                  <td className="row-actions">
                    {owner && m.role !== 'owner' && (
                      <button type="button" className="danger" onClick={() => remove(m)} aria-label={`Remove ${m.email}`}>
                        Remove
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
