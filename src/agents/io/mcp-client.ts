import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { refusalOf } from './ssrf.js';

export interface McpServerConfig {
  name: string;
  url: string;
  server_type: string;
  headers: Record<string, string>;
  /** The fetch to connect with: the outbound-address policy's (services/outbound-urls.ts); default the global one. */
  fetch?: typeof fetch;
}

export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** One connection to an MCP server for the span of a call: list its tools, call them. */
export class McpConnection {
  private constructor(
    private readonly client: Client,
    readonly server: McpServerConfig,
  ) {}

  static async open(server: McpServerConfig, signal?: AbortSignal): Promise<McpConnection> {
    const url = new URL(server.url);
    const options = { requestInit: { headers: server.headers }, fetch: server.fetch };
    const transport: Transport = server.server_type === 'sse' ? new SSEClientTransport(url, options) : new StreamableHTTPClientTransport(url, options);
    const client = new Client({ name: 'cairn-agent', version: '1.0.0' });
    try {
      await client.connect(transport, { signal });
    } catch (err) {
      // A refused address is named as such, not hidden behind the SDK's "fetch failed".
      const cause = refusalOf(err) ?? err;
      throw new Error(`MCP server '${server.name}' at ${server.url}: ${cause instanceof Error ? cause.message : String(cause)}`);
    }
    return new McpConnection(client, server);
  }

  async tools(signal?: AbortSignal): Promise<McpToolInfo[]> {
    const { tools } = await this.client.listTools({}, { signal });
    return tools.map((t) => ({ name: t.name, description: t.description ?? '', inputSchema: (t.inputSchema ?? { type: 'object' }) as Record<string, unknown> }));
  }

  /** The tool's text content (JSON for structured-only results); a tool error becomes the text "Error: …". */
  async call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
    const result = await this.client.callTool({ name, arguments: args }, undefined, { signal });
    const content = (result.content as { type: string; text?: string }[] | undefined) ?? [];
    const text = content.map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n') || (result.structuredContent ? JSON.stringify(result.structuredContent) : '');
    return result.isError ? `Error: ${text}` : text;
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
  }
}
