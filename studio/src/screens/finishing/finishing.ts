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
  if (days < NEAR_EXPIRY_DAYS)
    return {
      state: 'near-expiry',
      label: days === 0 ? 'expires today' : `expires in ${days} ${days === 1 ? 'day' : 'days'}`,
    };
  return { state: 'valid', label: 'valid' };
}

/** Why a time-stamp needs an authority named, on a Pressroom without one of its own (GET /v1/capabilities). */
export const NO_SERVICE_TSA =
  'this Pressroom has no time-stamp service of its own, so a time-stamp comes from one you name (your certificate provider can tell you its address).';

/** The Run panel's finishing fields, as typed. */
export interface FinishingDraft {
  /** `source`: the mark is `text`, or an image or PDF `asset` of the library by name. */
  watermark: { on: boolean; source: 'text' | 'asset'; text: string; asset: string; opacity: string };
  /** `tsaUrl`: the account's own time-stamp authority (empty: the service's); `visible`: a mark in a box on `page` at `x`, `y` (points from the bottom left). */
  sign: {
    on: boolean;
    certificate: string;
    reason: string;
    location: string;
    timestamp: boolean;
    tsaUrl: string;
    visible: boolean;
    page: string;
    x: string;
    y: string;
    width: string;
    height: string;
  };
  /** The permissions as the API defaults them: high-quality printing and filling forms allowed, copying, changing and annotating not. */
  protect: {
    on: boolean;
    userPassword: string;
    ownerPassword: string;
    printing: 'high' | 'low' | 'none';
    copying: boolean;
    modifying: boolean;
    annotating: boolean;
    fillingForms: boolean;
  };
}

export const EMPTY_FINISHING: FinishingDraft = {
  watermark: { on: false, source: 'text', text: '', asset: '', opacity: '0.3' },
  sign: {
    on: false,
    certificate: '',
    reason: '',
    location: '',
    timestamp: false,
    tsaUrl: '',
    visible: false,
    page: '1',
    x: '36',
    y: '36',
    width: '200',
    height: '60',
  },
  protect: {
    on: false,
    userPassword: '',
    ownerPassword: '',
    printing: 'high',
    copying: false,
    modifying: false,
    annotating: false,
    fillingForms: true,
  },
};

/** A number typed in a field, or undefined when it is not one. */
function numberIn(text: string): number | undefined {
  const value = Number(text);
  return text.trim() !== '' && Number.isFinite(value) ? value : undefined;
}

/**
 * The create request's `watermark`, `sign` and `protect`, or what is missing before any can be sent.
 * `serviceTsa` false: this Pressroom has no time-stamp authority of its own, so a time-stamp needs one named.
 */
export function finishingRequest(
  draft: FinishingDraft,
  serviceTsa = true,
): { request: Record<string, unknown> } | { error: string } {
  const request: Record<string, unknown> = {};
  if (draft.watermark.on) {
    const opacity = numberIn(draft.watermark.opacity);
    const byAsset = draft.watermark.source === 'asset';
    if (byAsset ? !draft.watermark.asset.trim() : !draft.watermark.text.trim())
      return { error: byAsset ? 'Watermark: choose an asset.' : 'Watermark: type its text.' };
    if (opacity === undefined || opacity < 0.05 || opacity > 1)
      return { error: 'Watermark: the opacity is a number from 0.05 to 1.' };
    request.watermark = byAsset
      ? { asset: draft.watermark.asset.trim(), opacity }
      : { text: draft.watermark.text, opacity };
  }
  if (draft.sign.on) {
    const s = draft.sign;
    if (!s.certificate) return { error: 'Signature: choose a certificate.' };
    let visible: Record<string, number> | undefined;
    if (s.visible) {
      const box = {
        page: numberIn(s.page),
        x: numberIn(s.x),
        y: numberIn(s.y),
        width: numberIn(s.width),
        height: numberIn(s.height),
      };
      if (
        Object.values(box).some((value) => value === undefined || value < 0) ||
        !Number.isInteger(box.page) ||
        box.page! < 1
      )
        return {
          error:
            'Visible signature: the page is a whole number from 1, and x, y, width and height are numbers of points.',
        };
      if (box.width! < 20 || box.height! < 20)
        return { error: 'Visible signature: the box is at least 20 × 20 points.' };
      visible = box as Record<string, number>;
    }
    if (s.timestamp && !serviceTsa && !s.tsaUrl.trim())
      return { error: `Time-stamp: ${NO_SERVICE_TSA} Give its address, or leave the time-stamp out.` };
    if (s.timestamp && s.tsaUrl.trim() && !/^https?:\/\//i.test(s.tsaUrl.trim()))
      return {
        error: serviceTsa
          ? "Time-stamp authority: an https:// address, or leave it empty for the service's."
          : 'Time-stamp authority: an https:// address.',
      };
    request.sign = {
      certificate: s.certificate,
      ...(s.reason.trim() ? { reason: s.reason.trim() } : {}),
      ...(s.location.trim() ? { location: s.location.trim() } : {}),
      ...(s.timestamp ? { timestamp: true } : {}),
      ...(s.timestamp && s.tsaUrl.trim() ? { tsa_url: s.tsaUrl.trim() } : {}),
      ...(visible ? { visible } : {}),
    };
  }
  // The service refuses the two together (encryption rewrites every byte, breaking the signature).
  if (draft.sign.on && draft.protect.on)
    return {
      error: 'A signature and protection cannot go together: the encryption would break the signature. Leave one out.',
    };
  if (draft.protect.on) {
    const p = draft.protect;
    if (!p.ownerPassword) return { error: 'Protection: the owner password is required.' };
    if (p.ownerPassword === p.userPassword) return { error: 'Protection: the owner and user passwords must differ.' };
    const d = EMPTY_FINISHING.protect;
    const changed =
      p.printing !== d.printing ||
      p.copying !== d.copying ||
      p.modifying !== d.modifying ||
      p.annotating !== d.annotating ||
      p.fillingForms !== d.fillingForms;
    request.protect = {
      owner_password: p.ownerPassword,
      ...(p.userPassword ? { user_password: p.userPassword } : {}),
      ...(changed
        ? {
            permissions: {
              printing: p.printing,
              copying: p.copying,
              modifying: p.modifying,
              annotating: p.annotating,
              filling_forms: p.fillingForms,
            },
          }
        : {}),
    };
  }
  return { request };
}

/** The finishing for a snippet: as sent, but passwords as placeholders (a snippet is copied and shared; so is a password in it). */
export function forSnippet(request: Record<string, unknown>): Record<string, unknown> {
  const protect = request.protect as { owner_password?: string; user_password?: string } | undefined;
  if (!protect) return request;
  return {
    ...request,
    protect: {
      ...protect,
      owner_password: '<owner password>',
      ...(protect.user_password ? { user_password: '<user password>' } : {}),
    },
  };
}
