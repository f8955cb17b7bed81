import net from 'node:net';

/** A TCP relay to `target` (host:port) that a test can cut, as a server that went down, and restore. */
export interface TcpProxy {
  /** host:port to connect to instead of the target. */
  address: string;
  /** Drops every relayed connection and refuses new ones (the port stays reserved). */
  down(): Promise<void>;
  /** Relays again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (p: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(p, '127.0.0.1', () => resolve()));
  await listen(0);
  const ownPort = (server.address() as net.AddressInfo).port;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  return { address: `127.0.0.1:${ownPort}`, down: stop, up: () => listen(ownPort), close: () => (server.listening ? stop() : Promise.resolve()) };
}
