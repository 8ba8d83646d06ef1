import net from 'node:net';

/**
 * A TCP proxy on loopback in front of a real server (PostgreSQL), which a test turns into an outage without touching
 * the server others use:
 * - `pass`: bytes are forwarded both ways;
 * - `refuse`: nothing listens on the port any more, so a connect is refused (ECONNREFUSED), as when the server is down;
 * - `hang`: connections are accepted and not answered, open ones stop carrying bytes: everything is held, and
 *   delivered when the mode is `pass` again (connections accepted meanwhile are then connected through), as with a
 *   server that hangs (its kernel still accepts connections and takes their bytes) and then resumes;
 * and `cut()` resets every connection open now, as a server crash or a network cut does.
 */
export type ProxyMode = 'pass' | 'refuse' | 'hang';

export interface TcpProxy {
  readonly port: number;
  readonly mode: ProxyMode;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Sockets open now, the clients' and the proxy's own to the server. */
  readonly open: number;
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  setMode(mode: ProxyMode): Promise<void>;
  /** Resets every connection open now, in any mode. */
  cut(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  const flushers = new Set<() => void>();
  let mode: ProxyMode = 'pass';
  let accepted = 0;
  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => {});
  };
  // Bytes arriving while hung are held, not dropped: a hung server that resumes reads what was sent meanwhile.
  const forward = (from: net.Socket, to: net.Socket) => {
    const held: Buffer[] = [];
    const flush = () => {
      for (const chunk of held.splice(0)) to.write(chunk);
    };
    flushers.add(flush);
    from.on('close', () => flushers.delete(flush));
    from.on('data', (chunk: Buffer) => (mode === 'hang' ? held.push(chunk) : to.write(chunk)));
  };
  const waiting = new Set<() => void>();
  const accept = (client: net.Socket) => {
    accepted += 1;
    track(client);
    if (mode === 'hang') {
      // Its bytes are held until the server "resumes"; a client that gives up meanwhile is simply gone.
      const held: Buffer[] = [];
      const hold = (chunk: Buffer) => held.push(chunk);
      client.on('data', hold);
      const resume = () => {
        client.off('data', hold);
        if (!client.destroyed) connectThrough(client, held);
      };
      waiting.add(resume);
      client.on('close', () => waiting.delete(resume));
      return;
    }
    connectThrough(client, []);
  };
  const connectThrough = (client: net.Socket, early: Buffer[]) => {
    const upstream = net.connect(target.port, target.host);
    for (const chunk of early) upstream.write(chunk);
    track(upstream);
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    forward(client, upstream);
    forward(upstream, client);
  };
  // A server per listening period: close() stops listening at once (its callback would wait for every connection).
  let server: net.Server | null = null;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = net.createServer(accept);
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        s.off('error', reject);
        server = s;
        resolve((s.address() as net.AddressInfo).port);
      });
    });
  const port = await listen(0);
  const stopListening = () => {
    server?.close();
    server = null;
  };
  return {
    port,
    get mode() {
      return mode;
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return open.size;
    },
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async setMode(next) {
      if (next === 'refuse') stopListening();
      else if (!server) await listen(port);
      mode = next;
      if (next !== 'pass') return;
      for (const flush of flushers) flush();
      for (const resume of [...waiting]) resume();
      waiting.clear();
    },
    cut() {
      for (const socket of open) socket.resetAndDestroy();
    },
    async close() {
      stopListening();
      this.cut();
    },
  };
}
