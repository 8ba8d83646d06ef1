import { spawn } from 'node:child_process';

/** An implementation independent of the SDK's: `openssl dgst -sha256 -hmac`, message piped on stdin. */
export function opensslHmacHex(secret: string, message: Uint8Array | string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('openssl', ['dgst', '-sha256', '-hmac', secret], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const hex = /([0-9a-f]{64})\s*$/.exec(out)?.[1];
      if (code !== 0 || !hex) reject(new Error(`openssl failed (${code}): ${err || out}`));
      else resolve(hex);
    });
    child.stdin.end(message);
  });
}

/** The signed message, `<timestamp>.<body bytes>`, built without the SDK. */
export function signedMessage(timestamp: string | number, body: string | Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), Buffer.from(body)]);
}
