import { sql, type Kysely, type Selectable, type SqlBool, type Updateable } from 'kysely';
import type { AgentSessionsTable, AgentVersionsTable, AgentsTable, Database } from './schema.js';
import { containsText, countRows, escapeLike, pageRows, type PageQuery } from './paging.js';
import { nameKeyTaken } from './name-keys.js';

export type AgentRow = Selectable<AgentsTable>;
export type AgentPatch = Updateable<AgentsTable>;
export type AgentVersionRow = Selectable<AgentVersionsTable>;
export type AgentSessionRow = Selectable<AgentSessionsTable>;

export interface AgentQuery extends PageQuery<'create_time' | 'update_time' | 'title'> {
  /** Agents of these tenants (the caller's own and, for `team` agents, the teams they belong to). */
  tenantIds: string[];
  /** The caller's tenant: its `me` agents are visible, other tenants' only when `team`. */
  ownTenantId: string;
  id?: string;
  title?: string;
  keywords?: string;
  /** Only canvases of these categories (none given = all). */
  categories?: string[];
  /** Only canvases carrying any of these tags (whole tags: 'ml' does not match 'ml-ops'). */
  tags?: string[];
}

export class AgentRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: AgentRow): Promise<void> {
    await this.db.insertInto('agents').values(row).execute();
  }

  byId(id: string): Promise<AgentRow | undefined> {
    return this.db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
  }

  titleTaken(tenantId: string, titleKey: string, exceptId?: string): Promise<boolean> {
    return nameKeyTaken(this.db, 'agents', tenantId, titleKey, exceptId);
  }

  private filtered(query: AgentQuery) {
    let q = this.db
      .selectFrom('agents')
      .where((eb) => eb.or([eb('tenant_id', '=', query.ownTenantId), eb.and([eb('tenant_id', 'in', query.tenantIds), eb('permission', '=', 'team')])]));
    if (query.id) q = q.where('id', '=', query.id);
    if (query.title) q = q.where('title', '=', query.title);
    if (query.keywords) q = q.where(containsText('title', query.keywords));
    if (query.categories?.length) q = q.where('canvas_category', 'in', query.categories);
    const tags = query.tags;
    if (tags?.length) q = q.where((eb) => eb.or(tags.map((tag) => sql<SqlBool>`(',' || lower(tags) || ',') like ${`%,${escapeLike(tag.toLowerCase())},%`} escape '\\'`)));
    return q;
  }

  list(query: AgentQuery): Promise<AgentRow[]> {
    return pageRows(this.filtered(query), query);
  }

  async count(query: AgentQuery): Promise<number> {
    return countRows(this.filtered(query));
  }

  /** The tags strings of the agents the query sees (RAGFlow's tag counts). */
  async tagValues(query: AgentQuery): Promise<string[]> {
    return (await this.filtered(query).select('tags').where('tags', '!=', '').execute()).map((r) => r.tags);
  }

  async update(id: string, patch: AgentPatch): Promise<void> {
    await this.db.updateTable('agents').set(patch).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('agents').where('id', '=', id).execute();
  }

  async addVersion(row: AgentVersionRow): Promise<void> {
    await this.db.insertInto('agent_versions').values(row).execute();
  }

  versions(agentId: string): Promise<AgentVersionRow[]> {
    return this.db.selectFrom('agent_versions').selectAll().where('agent_id', '=', agentId).orderBy('create_time', 'desc').orderBy('id').execute();
  }

  version(agentId: string, versionId: string): Promise<AgentVersionRow | undefined> {
    return this.db.selectFrom('agent_versions').selectAll().where('agent_id', '=', agentId).where('id', '=', versionId).executeTakeFirst();
  }

  async deleteVersion(versionId: string): Promise<void> {
    await this.db.deleteFrom('agent_versions').where('id', '=', versionId).execute();
  }

  async setRelease(versionId: string, release: boolean): Promise<void> {
    await this.db.updateTable('agent_versions').set({ release: release ? 1 : 0 }).where('id', '=', versionId).execute();
  }

  latestRelease(agentId: string): Promise<AgentVersionRow | undefined> {
    return this.db
      .selectFrom('agent_versions')
      .selectAll()
      .where('agent_id', '=', agentId)
      .where('release', '=', 1)
      .orderBy('create_time', 'desc')
      .limit(1)
      .executeTakeFirst();
  }
}

export interface AgentSessionQuery extends PageQuery<'create_time' | 'update_time'> {
  agentId: string;
  id?: string;
  userId?: string;
}

export class AgentSessionRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: AgentSessionRow): Promise<void> {
    await this.db.insertInto('agent_sessions').values(row).execute();
  }

  byId(id: string): Promise<AgentSessionRow | undefined> {
    return this.db.selectFrom('agent_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  private filtered(query: AgentSessionQuery) {
    let q = this.db.selectFrom('agent_sessions').where('agent_id', '=', query.agentId);
    if (query.id) q = q.where('id', '=', query.id);
    if (query.userId) q = q.where('user_id', '=', query.userId);
    return q;
  }

  list(query: AgentSessionQuery): Promise<AgentSessionRow[]> {
    return pageRows(this.filtered(query), query);
  }

  async count(query: AgentSessionQuery): Promise<number> {
    return countRows(this.filtered(query));
  }

  async idsOfAgent(agentId: string): Promise<string[]> {
    return (await this.db.selectFrom('agent_sessions').select('id').where('agent_id', '=', agentId).execute()).map((r) => r.id);
  }

  async update(id: string, patch: Updateable<AgentSessionsTable>): Promise<void> {
    await this.db.updateTable('agent_sessions').set(patch).where('id', '=', id).execute();
  }

  async delete(ids: string[]): Promise<void> {
    if (ids.length) await this.db.deleteFrom('agent_sessions').where('id', 'in', ids).execute();
  }
}
