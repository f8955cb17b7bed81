import type { Principal } from './auth.js';
import { forbidden, notFound } from '../errors.js';
import type { DatasetRepo, DatasetRow } from '../store/datasets.js';

/** Something owned by a tenant and shared with the tenant's members when its permission is `team`. */
export interface TenantOwned {
  id: string;
  tenant_id: string;
  permission: 'me' | 'team';
}

/** Who may see and manage an object: the owner tenant always; its members only when permission is `team`. */
export function canManage(p: Principal, obj: TenantOwned): boolean {
  return obj.tenant_id === p.tenantId || (obj.permission === 'team' && p.teamTenants.includes(obj.tenant_id));
}

/**
 * Throws unless the caller may manage the object. A member of the owner's workspace learns that a private
 * object exists (403); anyone else cannot tell it from a missing one (404).
 */
export function requireManage<T extends TenantOwned>(p: Principal, obj: T | undefined, what: string, id: string): T {
  if (!obj) throw notFound(`${what} '${id}' not found`);
  if (canManage(p, obj)) return obj;
  if (p.teamTenants.includes(obj.tenant_id)) throw forbidden(`You don't have access to ${what.toLowerCase()} '${id}': it is private to its owner`);
  throw notFound(`${what} '${id}' not found`);
}

/** A principal acting for a tenant's owner: agent runs read the owner's datasets and memories. */
export function tenantPrincipal(tenantId: string): Principal {
  return { userId: tenantId, email: '', nickname: '', tenantId, teamTenants: [], isAdmin: false };
}

/** A dataset the caller may manage (RetrievalService's only need of datasets; DatasetService is one). */
export interface DatasetAccess {
  get(p: Principal, id: string): Promise<DatasetRow>;
}

/** DatasetAccess straight on the store, for activities (they start no workflows, so need no DatasetService). */
export function storeDatasetAccess(datasets: Pick<DatasetRepo, 'byId'>): DatasetAccess {
  return { get: async (p, id) => requireManage(p, await datasets.byId(id), 'Dataset', id) };
}
