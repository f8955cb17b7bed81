import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Database, McpServersTable } from './schema.js';

export type McpServerRow = Selectable<McpServersTable>;

export class McpServerRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: McpServerRow): Promise<void> {
    await this.db.insertInto('mcp_servers').values(row).execute();
  }

  byId(id: string): Promise<McpServerRow | undefined> {
    return this.db.selectFrom('mcp_servers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(tenantId: string): Promise<McpServerRow[]> {
    return this.db.selectFrom('mcp_servers').selectAll().where('tenant_id', '=', tenantId).orderBy('create_time', 'desc').orderBy('id').execute();
  }

  async nameTaken(tenantId: string, name: string, exceptId?: string): Promise<boolean> {
    let q = this.db.selectFrom('mcp_servers').select('id').where('tenant_id', '=', tenantId).where('name', '=', name);
    if (exceptId) q = q.where('id', '!=', exceptId);
    return (await q.executeTakeFirst()) !== undefined;
  }

  async update(id: string, patch: Updateable<McpServersTable>): Promise<void> {
    await this.db.updateTable('mcp_servers').set(patch).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('mcp_servers').where('id', '=', id).execute();
  }
}
