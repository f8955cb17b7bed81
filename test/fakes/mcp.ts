import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface FakeMcp {
  /** The endpoint, e.g. `http://127.0.0.1:40123/mcp`. */
  url: string;
  port: number;
  /** The headers of every request received, in order. */
  requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/**
 * A stateless MCP server speaking Streamable HTTP (the SDK's own server side) with one tool, `ping`,
 * answering "pong": what an MCP client of Cairn connects to in tests.
 */
export async function startFakeMcp(): Promise<FakeMcp> {
  const requests: IncomingHttpHeaders[] = [];
  const http = createServer((req, res) => {
    requests.push(req.headers);
    const server = new McpServer({ name: 'fake-mcp', version: '1.0.0' });
    server.registerTool('ping', { description: 'Answers pong.' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    requests,
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}
