import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { McpBackend } from './backend.js';
import { createMcpServer } from './tools.js';

/** Serves the tools over this process's stdin/stdout until the client closes stdin. Nothing else may write to stdout. */
export async function serveStdio(backend: McpBackend, onError: (err: Error) => void): Promise<void> {
  const server = createMcpServer(backend);
  const transport = new StdioServerTransport();
  transport.onerror = onError;
  const closed = new Promise<void>((resolve) => process.stdin.once('end', resolve));
  await server.connect(transport);
  await closed;
  await server.close();
}
