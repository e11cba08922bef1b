/**
 * `protect`: AES-256 encryption with permissions, by qpdf (pdf/qpdf.ts), the last change to a finished
 * PDF's bytes: it rewrites the whole file (every string and stream encrypted), so it runs after
 * compaction (whose object streams qpdf keeps) and after anything that signs. The passwords are the
 * customer's secrets: they reach qpdf in files of its private run directory, are never logged, never
 * echoed in an answer, and a job keeps them sealed (jobs store their options; `sealProtection`).
 */
import { decryptSecret, encryptSecret } from '../../shared/crypto.js';
import { ValidationError } from '../../shared/errors.js';
import type { PdfProtection } from '../../pdf/qpdf.js';
import type { ProtectRequest } from './finishing-requests.js';

/** The protection a request asks for, with the documented defaults; a 422 at `loc` when it cannot be. */
export function protectionOf(request: ProtectRequest, loc: (string | number)[]): PdfProtection {
  const userPassword = request.user_password ?? '';
  if (userPassword === request.owner_password) {
    // The same password for both would let whoever opens the file lift every permission.
    throw new ValidationError([
      {
        loc: [...loc, 'owner_password'],
        msg: 'owner_password must differ from user_password, or the permissions mean nothing',
        type: 'value_error',
      },
    ]);
  }
  const p = request.permissions ?? {};
  return {
    userPassword,
    ownerPassword: request.owner_password,
    permissions: {
      printing: p.printing ?? 'high',
      copying: p.copying ?? false,
      modifying: p.modifying ?? false,
      annotating: p.annotating ?? false,
      fillingForms: p.filling_forms ?? true,
    },
  };
}

/** A protection whose passwords are sealed (AES-256-GCM under a purpose-bound key), for a job row. */
export type SealedProtection = Omit<PdfProtection, 'userPassword' | 'ownerPassword'> & { sealed: string };

export function sealProtection(protection: PdfProtection, key: Buffer): SealedProtection {
  const { userPassword, ownerPassword, ...rest } = protection;
  return { ...rest, sealed: encryptSecret(key, JSON.stringify([userPassword, ownerPassword])) };
}

export function openProtection(sealed: SealedProtection, key: Buffer): PdfProtection {
  const { sealed: secret, ...rest } = sealed;
  const [userPassword, ownerPassword] = JSON.parse(decryptSecret(key, secret)) as [string, string];
  return { ...rest, userPassword, ownerPassword };
}
