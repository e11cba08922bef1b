/**
 * What the finishing screens share (issue 39): the certificate and signature-report shapes the API
 * answers, a certificate's validity as a person reads it, and the
 * `sign`, `watermark` and `protect` objects of a create request built from the Run panel's fields.
 * Pure (reading a File is read-file.ts, which needs the DOM).
 */

/** A signing certificate as GET /v1/certificates lists it (never its key). */
export interface CertificateInfo {
  name: string;
  subject: string;
  issuer: string;
  serial: string;
  not_before: string;
  not_after: string;
  fingerprint_sha256: string;
}

/** One signature of POST /v1/pdf-tools/verify's report. */
export interface SignatureEntry {
  field: string;
  signer: string | null;
  signer_dn: string | null;
  signing_time: string | null;
  timestamp: { present: boolean; time: string | null };
  subfilter: string | null;
  valid: boolean;
  validation: string;
  covers_whole_document: boolean;
}

export interface SignatureReport {
  signed: boolean;
  intact: boolean;
  modified_after_signing: boolean;
  signatures: SignatureEntry[];
}

/** A certificate this close to its end is marked, so it is renewed before signatures are refused. */
export const NEAR_EXPIRY_DAYS = 30;
const DAY_MS = 86_400_000;

export type Validity = { state: 'valid' | 'near-expiry' | 'expired' | 'not-yet-valid'; label: string };

/** Whether a certificate signs today, and how long it still does. */
export function validityOf(cert: Pick<CertificateInfo, 'not_before' | 'not_after'>, now = Date.now()): Validity {
  const from = Date.parse(cert.not_before);
  const until = Date.parse(cert.not_after);
  if (now > until) return { state: 'expired', label: 'expired: signatures are refused' };
  if (now < from) return { state: 'not-yet-valid', label: 'not valid yet' };
  const days = Math.floor((until - now) / DAY_MS);
  if (days < NEAR_EXPIRY_DAYS) return { state: 'near-expiry', label: days === 0 ? 'expires today' : `expires in ${days} ${days === 1 ? 'day' : 'days'}` };
  return { state: 'valid', label: 'valid' };
}

/** The Run panel's finishing fields, as typed. */
export interface FinishingDraft {
  watermark: { on: boolean; text: string; opacity: string };
  sign: { on: boolean; certificate: string; reason: string; location: string; timestamp: boolean };
  protect: { on: boolean; userPassword: string; ownerPassword: string };
}

export const EMPTY_FINISHING: FinishingDraft = {
  watermark: { on: false, text: '', opacity: '0.3' },
  sign: { on: false, certificate: '', reason: '', location: '', timestamp: false },
  protect: { on: false, userPassword: '', ownerPassword: '' },
};

/** The create request's `watermark`, `sign` and `protect`, or what is missing before any can be sent. */
export function finishingRequest(draft: FinishingDraft): { request: Record<string, unknown> } | { error: string } {
  const request: Record<string, unknown> = {};
  if (draft.watermark.on) {
    const opacity = Number(draft.watermark.opacity);
    if (!draft.watermark.text.trim()) return { error: 'Watermark: type its text.' };
    if (draft.watermark.opacity.trim() === '' || !Number.isFinite(opacity) || opacity < 0.05 || opacity > 1) return { error: 'Watermark: the opacity is a number from 0.05 to 1.' };
    request.watermark = { text: draft.watermark.text, opacity };
  }
  if (draft.sign.on) {
    if (!draft.sign.certificate) return { error: 'Signature: choose a certificate.' };
    request.sign = {
      certificate: draft.sign.certificate,
      ...(draft.sign.reason.trim() ? { reason: draft.sign.reason.trim() } : {}),
      ...(draft.sign.location.trim() ? { location: draft.sign.location.trim() } : {}),
      ...(draft.sign.timestamp ? { timestamp: true } : {}),
    };
  }
  // The service refuses the two together (encryption rewrites every byte, breaking the signature).
  if (draft.sign.on && draft.protect.on) return { error: 'A signature and protection cannot go together: the encryption would break the signature. Leave one out.' };
  if (draft.protect.on) {
    if (!draft.protect.ownerPassword) return { error: 'Protection: the owner password is required.' };
    if (draft.protect.ownerPassword === draft.protect.userPassword) return { error: 'Protection: the owner and user passwords must differ.' };
    request.protect = { owner_password: draft.protect.ownerPassword, ...(draft.protect.userPassword ? { user_password: draft.protect.userPassword } : {}) };
  }
  return { request };
}

/** The finishing for a snippet: as sent, but passwords as placeholders (a snippet is copied and shared; so is a password in it). */
export function forSnippet(request: Record<string, unknown>): Record<string, unknown> {
  const protect = request.protect as { owner_password?: string; user_password?: string } | undefined;
  if (!protect) return request;
  return { ...request, protect: { ...protect, owner_password: '<owner password>', ...(protect.user_password ? { user_password: '<user password>' } : {}) } };
}
