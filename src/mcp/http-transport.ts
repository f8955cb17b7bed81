import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthService, Principal } from '../services/auth.js';
import { sendError } from '../api/envelope.js';
import { createMcpServer } from './tools.js';
import { ServiceBackend, type McpServices } from './service-backend.js';

export const MCP_PATH = '/mcp';

export interface McpHttpDeps {
  auth: AuthService;
  services: McpServices;
  log: Logger;
  jsonLimit: number;
}

/**
 * `app` with the MCP Streamable HTTP endpoint in front of it at /mcp. Stateless: every POST gets its own
 * server and transport acting as the caller its API key names, so there are no sessions to keep or share.
 */
export function withMcp(app: express.Express, deps: McpHttpDeps): express.Express {
  const root = express();
  root.disable('x-powered-by');
  root.all(MCP_PATH, logRequest(deps.log), authenticate(deps), express.json({ limit: deps.jsonLimit }), mcpHandler(deps), errorHandler(deps.log));
  root.use(app);
  return root;
}

/** The caller must present an API key or token, for every method; the principal goes to res.locals. */
function authenticate({ auth }: McpHttpDeps) {
  return async (req: Request, res: Response, next: NextFunction) => {
    res.locals.principal = await auth.resolve(req.headers.authorization);
    if (res.locals.principal) return next();
    res.setHeader('WWW-Authenticate', 'Bearer');
    const problem = req.headers.authorization ? 'invalid API key or token' : 'missing Authorization header (expected "Bearer <API key>")';
    sendError(res, 401, 401, `Unauthorized: ${problem}`);
  };
}

function mcpHandler({ services, log }: McpHttpDeps) {
  return async (req: Request, res: Response) => {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return sendRpcError(res, 405, -32000, `Method ${req.method} is not allowed on ${MCP_PATH}: this server is stateless, send JSON-RPC requests with POST`);
    }
    const server = createMcpServer(new ServiceBackend(services, res.locals.principal as Principal, log));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
}

/** Failures as JSON-RPC errors; a body that is not JSON gets the parse error, as the transport itself would answer. */
function errorHandler(log: Logger) {
  return (err: { type?: string; status?: number; message?: string }, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      log.error({ err }, 'mcp request failed after the response started');
      return void res.end();
    }
    if (err.type === 'entity.parse.failed') return sendRpcError(res, 400, -32700, 'Parse error: the request body is not valid JSON');
    if (err.status && err.status >= 400 && err.status < 500) return sendRpcError(res, err.status, -32600, err.message ?? 'Invalid request');
    log.error({ err }, 'mcp request failed');
    sendRpcError(res, 500, -32603, 'Internal error: the failure was logged');
  };
}

function sendRpcError(res: Response, status: number, code: number, message: string) {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** One log line per request with its timing, like the API's. */
function logRequest(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
    });
    next();
  };
}
