/**
 * Two times read from a signature's CMS (DER) without a full ASN.1 parser: the signing-time signed
 * attribute, and the genTime of an RFC 3161 token in the unsigned attributes. Each is found as the
 * first time value after its object identifier — the structures put it there: `Attribute ::= SEQUENCE
 * { attrType, attrValues SET { Time } }`, and in a TSTInfo genTime is the first GeneralizedTime (version,
 * policy, imprint and serial hold none). Used for the report only; validity is pdfsig's judgement.
 */

/** DER of the OID 1.2.840.113549.1.9.5 (signingTime). */
const SIGNING_TIME_OID = Buffer.from('06092a864886f70d010905', 'hex');
/** DER of the OID 1.2.840.113549.1.9.16.2.14 (id-aa-timeStampToken). */
const TIMESTAMP_TOKEN_OID = Buffer.from('060b2a864886f70d010910020e', 'hex');
/** DER of the OID 1.2.840.113549.1.9.16.1.4 (id-ct-TSTInfo). */
const TSTINFO_OID = Buffer.from('060b2a864886f70d0109100104', 'hex');

const UTC_TIME = 0x17;
const GENERALIZED_TIME = 0x18;

/** The first UTCTime or GeneralizedTime (as `tags` allows) within `window` bytes after `from`. */
function firstTimeAfter(der: Buffer, from: number, tags: number[], window = 4096): Date | null {
  const end = Math.min(der.length - 2, from + window);
  for (let i = from; i < end; i++) {
    if (!tags.includes(der[i]!)) continue;
    const length = der[i + 1]!;
    if (length < 11 || length > 23 || i + 2 + length > der.length) continue;
    const text = der.subarray(i + 2, i + 2 + length).toString('latin1');
    const parsed = parseTime(text, der[i] === UTC_TIME);
    if (parsed) return parsed;
  }
  return null;
}

/** `YYMMDDHHMMSSZ` (UTCTime) or `YYYYMMDDHHMMSS[.fff]Z` (GeneralizedTime), UTC only as DER requires. */
function parseTime(text: string, utcTime: boolean): Date | null {
  const match = utcTime
    ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
    : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{1,3}))?Z$/.exec(text);
  if (!match) return null;
  const year = utcTime ? (Number(match[1]) < 50 ? 2000 : 1900) + Number(match[1]) : Number(match[1]);
  const ms = match[7] ? Number(match[7].padEnd(3, '0')) : 0;
  const date = new Date(
    Date.UTC(year, Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5]), Number(match[6]), ms),
  );
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The signing-time signed attribute, or null. */
export function signingTimeOf(cms: Buffer): Date | null {
  const at = cms.indexOf(SIGNING_TIME_OID);
  return at < 0 ? null : firstTimeAfter(cms, at + SIGNING_TIME_OID.length, [UTC_TIME, GENERALIZED_TIME], 32);
}

/** The genTime of the time-stamp token in the unsigned attributes, or null when there is none. */
export function timestampTimeOf(cms: Buffer): Date | null {
  const token = cms.indexOf(TIMESTAMP_TOKEN_OID);
  if (token < 0) return null;
  const info = cms.indexOf(TSTINFO_OID, token);
  return info < 0 ? null : firstTimeAfter(cms, info + TSTINFO_OID.length, [GENERALIZED_TIME]);
}
