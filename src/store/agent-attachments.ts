import type { Kysely, Selectable } from 'kysely';
import type { AgentAttachmentsTable, Database } from './schema.js';

export type AgentAttachmentRow = Selectable<AgentAttachmentsTable>;

/** Files uploaded to agents (`POST /agents/{id}/upload`); their bytes live in the blob store. */
export class AgentAttachmentRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rows: AgentAttachmentRow[]): Promise<void> {
    if (rows.length) await this.db.insertInto('agent_attachments').values(rows).execute();
  }

  byId(id: string): Promise<AgentAttachmentRow | undefined> {
    return this.db.selectFrom('agent_attachments').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byIds(ids: string[]): Promise<AgentAttachmentRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.db.selectFrom('agent_attachments').selectAll().where('id', 'in', ids).execute();
  }

  ofAgent(agentId: string): Promise<AgentAttachmentRow[]> {
    return this.db.selectFrom('agent_attachments').selectAll().where('agent_id', '=', agentId).execute();
  }
}
