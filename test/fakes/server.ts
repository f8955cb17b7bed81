import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { DEFAULT_BEHAVIOUR, type FakeBehaviour } from './script.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, raw text if it is not JSON, undefined if empty. */
  body: any;
}

export interface FakeServer {
  /** Server root, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  url: string;
  /** Every request received, in order (bodies parsed), so tests can assert what a client sent. */
  requests: RecordedRequest[];
  /** Forgets the recorded requests (the same array is emptied). */
  clear(): void;
  /** The scripted behaviour; change it between calls to script answers, delays or failures. */
  behaviour: FakeBehaviour;
  /** Requests being answered right now (a stream counts until the client leaves or it ends). */
  readonly open: number;
  close(): Promise<void>;
}

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  body: any;
  behaviour: FakeBehaviour;
  /** True once the client has gone away (stop streaming). */
  closed(): boolean;
  /** Aborted when the client goes away. */
  clientGone: AbortSignal;
}

export type Route = (ex: Exchange) => Promise<void> | void;

export interface ServerStyle {
  routes: Record<string, Route>;
  /** Error body in the provider's own shape. */
  errorBody(status: number, message: string): unknown;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Starts a scripted HTTP server on 127.0.0.1 (random port) answering `routes` (keys: `METHOD /path`). */
export async function startServer(style: ServerStyle, behaviour: Partial<FakeBehaviour> = {}): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  let open = 0;
  const state: FakeServer = {
    url: '',
    requests,
    get open() {
      return open;
    },
    clear: () => {
      requests.length = 0;
    },
    behaviour: { ...DEFAULT_BEHAVIOUR, ...behaviour, failure: behaviour.failure && { ...behaviour.failure } },
    close: async () => {},
  };

  const server = createServer(async (req, res) => {
    open++;
    res.once('close', () => open--);
    try {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const body = await readBody(req);
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
      const failure = state.behaviour.failure;
      if (failure && (!failure.path || path.startsWith(failure.path)) && (failure.times ?? 1) > 0) {
        if (failure.times !== undefined) failure.times--;
        sendJson(res, failure.status, style.errorBody(failure.status, failure.message ?? `scripted failure ${failure.status}`));
        return;
      }
      const route = style.routes[`${req.method} ${path}`];
      if (!route) {
        sendJson(res, 404, style.errorBody(404, `no route ${req.method} ${path}`));
        return;
      }
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      await route({ req, res, body, behaviour: state.behaviour, closed: () => gone.signal.aborted || res.destroyed, clientGone: gone.signal });
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, style.errorBody(500, (err as Error).message));
      else res.destroy();
    }
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return state;
}

/** A URL on 127.0.0.1 where nothing listens (connections are refused). */
export async function closedPortUrl(): Promise<string> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A server that accepts connections and reads requests but never answers (for timeout tests). */
export async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
