import { generateKeyPair } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import selfsigned from 'selfsigned';

/**
 * A real HTTPS webhook receiver for tests: TLS on 127.0.0.1 with a certificate made at start (no key in the repo),
 * recording every request. Tests trust it by passing `ca` to the delivery client and `127.0.0.0/8` as allowed.
 */

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: Date;
}

/**
 * The body has already been read (and recorded) when the handler runs, so it is passed in. A returned promise is
 * awaited; the result type is `unknown` so one-liners like `(_req, res) => res.writeHead(200).end()` type-check.
 */
export type ReceiverHandler = (req: IncomingMessage, res: ServerResponse, body: string) => unknown;

export interface HttpsReceiver {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The receiver's self-signed certificate, to be trusted as a CA. */
  readonly ca: string;
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far, TLS handshakes that failed included. */
  readonly connections: number;
  setHandler(handler: ReceiverHandler): void;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** Names the certificate is valid for: IP addresses and DNS names. Default: the listening address and `localhost`. */
  altNames?: string[];
  /** Loopback address to listen on; another one (127.0.0.2) shows a refused address was never dialled. */
  host?: string;
  handler?: ReceiverHandler;
}

export interface Certificate {
  key: string;
  cert: string;
}

// RSA key generation is the slow part; certificates are cheap, so one key serves every certificate of a process.
let keyPair: Promise<{ privateKey: string; publicKey: string }> | null = null;
function sharedKeyPair(): Promise<{ privateKey: string; publicKey: string }> {
  keyPair ??= promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return keyPair;
}

/** A self-signed certificate for `altNames`; the first name is also the common name. */
export async function makeCertificate(altNames: string[]): Promise<Certificate> {
  const names = altNames.map((name) => (net.isIP(name) ? { type: 7 as const, ip: name } : { type: 2 as const, value: name }));
  const now = Date.now();
  const pems = await selfsigned.generate([{ name: 'commonName', value: altNames[0] ?? 'localhost' }], {
    keyPair: await sharedKeyPair(),
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: names },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

const answerOk: ReceiverHandler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
};

export async function startHttpsReceiver(options: ReceiverOptions = {}): Promise<HttpsReceiver> {
  const host = options.host ?? '127.0.0.1';
  const { key, cert } = await makeCertificate(options.altNames ?? [host, 'localhost']);
  const requests: ReceivedRequest[] = [];
  let handler = options.handler ?? answerOk;
  let connections = 0;
  const sockets = new Set<net.Socket>();

  const server = https.createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, receivedAt: new Date() });
      Promise.resolve()
        .then(() => handler(req, res, body))
        .catch(() => {
          if (!res.headersSent) res.writeHead(500);
          res.end();
        });
    });
  });
  server.on('connection', (socket: net.Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // Handshake failures are what several tests provoke on purpose; they are not errors of the receiver.
  server.on('tlsClientError', () => {});

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://${net.isIPv6(host) ? `[${host}]` : host}:${port}`,
    host,
    port,
    ca: cert,
    requests,
    get connections() {
      return connections;
    },
    setHandler(next) {
      handler = next;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Hanging and streaming handlers keep sockets open; a test's end must not wait for them.
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
