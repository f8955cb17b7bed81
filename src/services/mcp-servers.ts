import type { MetaStore } from '../store/index.js';
import type { McpServerRow } from '../store/mcp-servers.js';
import type { Principal } from './auth.js';
import { McpConnection, type McpServerConfig } from '../agents/io/mcp-client.js';
import { newId } from '../ids.js';
import { nowMs, toSeconds } from '../time.js';
import { badRequest, notFound } from '../errors.js';

export interface McpServerInput {
  name?: string;
  url?: string;
  server_type?: 'streamable-http' | 'sse';
  headers?: Record<string, string>;
  description?: string;
}

/**
 * Checked before Cairn connects to a URL a user gave (the SSRF guard); throws with the reason, or resolves
 * to the fetch to connect with (it connects only to addresses the guard accepts).
 */
export type UrlGuard = (url: string) => Promise<typeof fetch>;

export function mcpConfigOf(row: McpServerRow): McpServerConfig {
  return { name: row.name, url: row.url, server_type: row.server_type, headers: JSON.parse(row.headers) as Record<string, string> };
}

function checkUrl(url: unknown): string {
  if (typeof url !== 'string' || !url.trim()) throw badRequest('`url` is required');
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw badRequest(`\`url\` is not a URL: ${url}`);
  }
  if (!['http:', 'https:'].includes(parsed.protocol)) throw badRequest(`\`url\` must be http or https, not ${parsed.protocol}`);
  return parsed.toString();
}

/** MCP servers of a tenant: agents offer their tools to the model (Agent `params.mcp`). */
export class McpServerService {
  constructor(
    private readonly store: MetaStore,
    private readonly guard: UrlGuard,
  ) {}

  async create(p: Principal, input: McpServerInput) {
    const name = input.name?.trim();
    if (!name) throw badRequest('`name` is required');
    if (await this.store.mcpServers.nameTaken(p.tenantId, name)) throw badRequest(`An MCP server named '${name}' already exists`);
    const url = checkUrl(input.url);
    // Refused at registration already, not only when an agent first connects (checked again then: DNS can change).
    await this.guard(url);
    const now = nowMs();
    const row: McpServerRow = {
      id: newId(),
      tenant_id: p.tenantId,
      name,
      url,
      server_type: input.server_type ?? 'streamable-http',
      headers: JSON.stringify(input.headers ?? {}),
      description: input.description ?? '',
      create_time: now,
      update_time: now,
    };
    await this.store.mcpServers.insert(row);
    return this.view(row);
  }

  /** The tenant's server, or 404: servers (and the secrets in their headers) belong to one tenant. */
  async get(p: Principal, id: string): Promise<McpServerRow> {
    const row = await this.store.mcpServers.byId(id);
    if (!row || row.tenant_id !== p.tenantId) throw notFound(`MCP server '${id}' not found`);
    return row;
  }

  async detail(p: Principal, id: string) {
    return this.view(await this.get(p, id));
  }

  async list(p: Principal) {
    const rows = await this.store.mcpServers.list(p.tenantId);
    return { mcp_servers: rows.map((r) => this.view(r)), total: rows.length };
  }

  async update(p: Principal, id: string, input: McpServerInput) {
    const row = await this.get(p, id);
    const patch: Partial<McpServerRow> = { update_time: nowMs() };
    if (input.name !== undefined) {
      const name = input.name.trim();
      if (!name) throw badRequest('`name` must not be empty');
      if (await this.store.mcpServers.nameTaken(p.tenantId, name, id)) throw badRequest(`An MCP server named '${name}' already exists`);
      patch.name = name;
    }
    if (input.url !== undefined) {
      patch.url = checkUrl(input.url);
      await this.guard(patch.url);
    }
    if (input.server_type !== undefined) patch.server_type = input.server_type;
    if (input.headers !== undefined) patch.headers = JSON.stringify(input.headers);
    if (input.description !== undefined) patch.description = input.description;
    await this.store.mcpServers.update(row.id, patch);
    return this.view((await this.store.mcpServers.byId(id))!);
  }

  async delete(p: Principal, id: string): Promise<void> {
    await this.store.mcpServers.delete((await this.get(p, id)).id);
  }

  /** Connects and lists the server's tools: what an Agent may put in `params.mcp[].tools`. */
  async tools(p: Principal, id: string) {
    const row = await this.get(p, id);
    try {
      const fetch = await this.guard(row.url);
      const conn = await McpConnection.open({ ...mcpConfigOf(row), fetch }, AbortSignal.timeout(15_000));
      try {
        return { tools: await conn.tools(AbortSignal.timeout(15_000)) };
      } finally {
        await conn.close();
      }
    } catch (err) {
      throw badRequest(err instanceof Error ? err.message : String(err));
    }
  }

  /** Headers may hold credentials: only their names are shown. */
  private view(row: McpServerRow) {
    return {
      id: row.id,
      name: row.name,
      url: row.url,
      server_type: row.server_type,
      header_names: Object.keys(JSON.parse(row.headers) as object),
      description: row.description,
      create_time: toSeconds(row.create_time),
      update_time: toSeconds(row.update_time),
    };
  }
}
