import type { MetaStore } from '../store/index.js';
import type { AgentAttachmentRow } from '../store/agent-attachments.js';
import type { BlobStore } from '../blobs/types.js';
import type { Principal } from './auth.js';
import type { AgentService } from './agents.js';
import { agentAttachmentKey } from './blob-keys.js';
import { contentTypeFor, extensionOf } from '../parsing/formats.js';
import { isId, newId } from '../ids.js';
import { nowMs } from '../time.js';
import { badRequest, notFound } from '../errors.js';
import { API_PREFIX } from '../api/routes.js';

/** An uploaded file as multer hands it over. */
export interface UploadedFile {
  originalname: string;
  mimetype: string;
  buffer: Buffer;
}

/** What a turn's workflow gets for each attached file: enough to read it, nothing the client could forge. */
export interface TurnFile {
  id: string;
  name: string;
  mime_type: string;
}

const GENERIC_TYPES = new Set(['', 'application/octet-stream']);

/**
 * Files uploaded to an agent (RAGFlow's `POST /agents/{id}/upload`, `FileService.upload_info`): a row
 * per file (tenant-scoped) and its bytes in the blob store. A completion's `files` names them by id;
 * only the uploader's tenant reads them back or attaches them to a turn, and only on their agent.
 */
export class AgentAttachmentService {
  constructor(
    private readonly store: MetaStore,
    private readonly agents: AgentService,
    private readonly blobs: BlobStore,
  ) {}

  async upload(p: Principal, agentId: string, files: UploadedFile[]) {
    const agent = await this.agents.get(p, agentId);
    if (!files.length) throw badRequest('No file part! Upload files as multipart/form-data in the field `file`.');
    const rows: AgentAttachmentRow[] = files.map((f) => ({
      id: newId(),
      tenant_id: p.tenantId,
      agent_id: agent.id,
      created_by: p.userId,
      name: f.originalname,
      extension: extensionOf(f.originalname).replace(/^\./, '').toLowerCase(),
      // The client's type, unless it says nothing more than "bytes": then the one the name implies.
      mime_type: GENERIC_TYPES.has(f.mimetype ?? '') ? contentTypeFor(f.originalname) : f.mimetype,
      size: f.buffer.byteLength,
      create_time: nowMs(),
    }));
    for (const [i, row] of rows.entries()) await this.blobs.put(agentAttachmentKey(row.tenant_id, row.id), files[i]!.buffer);
    await this.store.agentAttachments.insert(rows);
    const views = rows.map(uploadInfo);
    return views.length === 1 ? views[0] : views;
  }

  /** The file's bytes for preview or download; another tenant's file is as missing as an unknown one. */
  async file(p: Principal, attachmentId: string): Promise<{ name: string; bytes: Uint8Array; contentType: string }> {
    const row = await this.owned(p, attachmentId);
    const bytes = row && (await this.blobs.get(agentAttachmentKey(row.tenant_id, row.id)));
    if (!row || !bytes) throw notFound(`File '${attachmentId}' not found`);
    return { name: row.name, bytes, contentType: row.mime_type || 'application/octet-stream' };
  }

  /**
   * A completion's `files` (RAGFlow's upload_info objects, or their ids) as the turn reads them: each must
   * be a file the caller's tenant uploaded to this agent.
   */
  async forTurn(p: Principal, agentId: string, files: unknown[]): Promise<TurnFile[]> {
    const ids = files.map((f, i) => {
      const id = typeof f === 'string' ? f : f && typeof f === 'object' ? (f as { id?: unknown }).id : undefined;
      if (typeof id !== 'string' || !id) throw badRequest(`files[${i}] must be a file uploaded with POST /api/v1/agents/${agentId}/upload (its object, or its id)`);
      return id;
    });
    const rows = new Map((await this.store.agentAttachments.byIds(ids.filter(isId))).map((r) => [r.id, r]));
    return ids.map((id) => {
      const row = rows.get(id);
      if (!row || row.tenant_id !== p.tenantId || row.agent_id !== agentId) throw notFound(`File '${id}' not found for agent '${agentId}': upload it with POST /api/v1/agents/${agentId}/upload`);
      return { id: row.id, name: row.name, mime_type: row.mime_type };
    });
  }

  /**
   * Deletes an agent (owner only, `AgentService.delete`) and the bytes of every file uploaded to it. The
   * rows go with the agent (foreign key), so they are read first; the bytes go once the agent is gone.
   * Returns the agent's session ids, as `AgentService.delete` does.
   */
  async deleteAgent(p: Principal, agentId: string): Promise<string[]> {
    const files = isId(agentId) ? await this.store.agentAttachments.ofAgent(agentId) : [];
    const sessionIds = await this.agents.delete(p, agentId);
    for (const row of files) await this.blobs.delete(agentAttachmentKey(row.tenant_id, row.id));
    return sessionIds;
  }

  private async owned(p: Principal, attachmentId: string): Promise<AgentAttachmentRow | undefined> {
    const row = isId(attachmentId) ? await this.store.agentAttachments.byId(attachmentId) : undefined;
    return row && row.tenant_id === p.tenantId ? row : undefined;
  }
}

/** RAGFlow's upload_info shape; `created_at` in seconds as RAGFlow's time.time(). */
function uploadInfo(row: AgentAttachmentRow) {
  return {
    id: row.id,
    name: row.name,
    size: row.size,
    extension: row.extension,
    mime_type: row.mime_type,
    created_by: row.created_by,
    created_at: row.create_time / 1000,
    preview_url: `${API_PREFIX}/agents/attachments/${row.id}/preview`,
  };
}
