/** Small formatting and parsing helpers shared by the screens. Pure, no DOM. */
import type { Job, RateLimitState, ValidationIssue } from './api-types.js';
import { describeIssue, inStudioWords } from './messages.js';

/** The rate-limit state of a response, or null when it carries no X-RateLimit-* headers. */
export function readRateLimit(header: (name: string) => string | null): RateLimitState | null {
  const limit = Number(header('x-ratelimit-limit'));
  const remaining = Number(header('x-ratelimit-remaining'));
  const resetAt = Number(header('x-ratelimit-reset'));
  if (!header('x-ratelimit-limit') || !Number.isFinite(limit) || !Number.isFinite(remaining)) return null;
  return { limit, remaining, resetAt: Number.isFinite(resetAt) ? resetAt : 0 };
}

/** A readable message for any error body the API sends (coded, detail string, or validation list), in the studio's words. */
export function describeErrorBody(status: number, body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const b = body as { message?: unknown; detail?: unknown; error?: unknown };
    if (typeof b.message === 'string') return inStudioWords(b.message);
    if (typeof b.detail === 'string') return inStudioWords(b.detail);
    if (Array.isArray(b.detail)) return (b.detail as ValidationIssue[]).map((issue) => describeIssue(issue)).join('; ');
    if (typeof b.error === 'string') return b.error;
  }
  if (typeof body === 'string' && body.trim() !== '') return body.trim().slice(0, 300);
  return `The server answered ${status}.`;
}

/** "3 s", "2 min 5 s", "1 h 4 min". */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${h} h${m ? ` ${m} min` : ''}`;
}

/** An ISO timestamp in the reader's locale, short. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** The change a transaction made to the balance, as the ledger signs it the other way round. */
export function formatBalanceChange(credits: number): string {
  if (credits === 0) return '0';
  return credits > 0 ? `−${credits}` : `+${-credits}`;
}

/** The server's own page margin rule (`0`, or a number with a unit the renderer knows), not a copy. */
export { isPageLength, PAGE_LENGTH_UNITS_TEXT } from '../../../src/rendering/page-length.js';

/** What a job rendered: "version 2 (prod)", or "the draft". */
export function jobVersionText(version: Job['version']): string {
  if (!version) return 'the draft';
  return `version ${version.number}${version.tag ? ` (${version.tag})` : ''}`;
}

/** The server's own version tag rule, not a copy. */
export { isVersionTag, VERSION_TAG_RULE_TEXT } from '../../../src/templates/version-tag.js';

/** Mirrors the server's filename rule (letters, digits, underscore, hyphen, dot; at most 100). */
export const FILENAME = /^[A-Za-z0-9_.-]{1,100}$/;

/**
 * A file name (without extension) the API accepts, made from a template's or a file's name:
 * "Invoice (Factur-X EN 16931)" → "Invoice-Factur-X-EN-16931", accents dropped; "document" when
 * nothing usable is left. Downloads are named after what they came from, not all "document.pdf".
 */
export function fileNameFrom(name: string, fallback = 'document'): string {
  const plain = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 100)
    .replace(/[-.]+$/, '');
  return FILENAME.test(plain) ? plain : fallback;
}
