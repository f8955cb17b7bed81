import { route, type RouteSpec } from '../routes.js';
import type { McpServerService } from '../../services/mcp-servers.js';

const properties = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  url: { type: 'string', minLength: 1, maxLength: 2048 },
  server_type: { enum: ['streamable-http', 'sse'] },
  headers: { type: 'object', maxProperties: 100, additionalProperties: { type: 'string', maxLength: 8192 } },
  description: { type: 'string', maxLength: 65535 },
};

/** The tenant's MCP servers, whose tools agents can call (RAGFlow's /mcp/servers). */
export function mcpServerRoutes(servers: McpServerService): RouteSpec[] {
  return [
    route({
      method: 'post', path: '/mcp/servers', tag: 'mcp servers', summary: 'Add an MCP server (name, url, server_type streamable-http | sse, headers)',
      body: { type: 'object', additionalProperties: false, required: ['name', 'url'], properties },
      handler: ({ principal, body }) => servers.create(principal, body),
    }),
    route({
      method: 'get', path: '/mcp/servers', tag: 'mcp servers', summary: "List the tenant's MCP servers ({mcp_servers, total}; header values are never shown)",
      handler: ({ principal }) => servers.list(principal),
    }),
    route({
      method: 'get', path: '/mcp/servers/:server_id', tag: 'mcp servers', summary: 'Get an MCP server',
      handler: ({ principal, params }) => servers.detail(principal, params.server_id),
    }),
    route({
      method: 'put', path: '/mcp/servers/:server_id', tag: 'mcp servers', summary: 'Update an MCP server (only the keys given)',
      body: { type: 'object', additionalProperties: false, properties },
      handler: ({ principal, params, body }) => servers.update(principal, params.server_id, body),
    }),
    route({
      method: 'delete', path: '/mcp/servers/:server_id', tag: 'mcp servers', summary: 'Delete an MCP server',
      handler: async ({ principal, params }) => {
        await servers.delete(principal, params.server_id);
        return true;
      },
    }),
    route({
      method: 'post', path: '/mcp/servers/:server_id/test', tag: 'mcp servers', summary: "Connect to the server and list its tools (a 400 carries the connection's error)",
      handler: ({ principal, params }) => servers.tools(principal, params.server_id),
    }),
  ];
}
