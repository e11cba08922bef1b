import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A random id of `length` characters from [A-Za-z0-9], without modulo bias. */
export function randomId(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 62 * 4 = 248: reject bytes >= 248 so every character is equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** Template ids are exactly 12 characters (SPEC: template_id length). */
export const newTemplateId = (): string => randomId(12);
export const newAccountId = (): string => `acc_${randomId(16)}`;
export const newJobId = (): string => randomUUID();
export const newFileId = (): string => randomId(24);
export const newTransactionRef = (): string => randomUUID();

/** One running process, as recorded on the rows it holds: `host:pid:random`, so an operator can tell which. */
export const newInstanceId = (): string => `${hostname()}:${process.pid}:${randomId(6)}`;
