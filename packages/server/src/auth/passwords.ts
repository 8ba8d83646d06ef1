import { hash, verify, Algorithm } from '@node-rs/argon2';
import { AppError } from '../errors.js';

// OWASP's argon2id baseline (19 MiB, 2 passes) keeps a login under ~50 ms on this class of machine.
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 12;

/** The rule of every password an admin sets (setup, a new admin, a change): `path` names the member at fault. */
export function checkPassword(password: string, path = '/password'): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('validation_failed', `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`, {
      errors: [{ path, message: `at least ${MIN_PASSWORD_LENGTH} characters` }],
    });
  }
}

export const hashPassword = (password: string): Promise<string> => hash(password, OPTIONS);

let dummyHash: Promise<string> | null = null;

/** Verifies against `stored`, or against a dummy hash when there is none, so unknown emails cost the same time. */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    dummyHash ??= hashPassword('svc-dummy-password-for-timing');
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
