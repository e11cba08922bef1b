import { describe, expect, it } from 'vitest';
import { downloadLinkKey, signDownload, verifyDownload } from './signed-link.js';

const key = downloadLinkKey('a-master-secret-of-at-least-32-characters!!');
const now = new Date('2026-01-01T12:00:00Z');
const grant = {
  fileId: 'f1le1dAbCdEfGhIjKlMnOpQr',
  filename: 'invoice-42.pdf',
  expiresAt: new Date('2026-01-01T13:00:00Z'),
};

describe('signed download links', () => {
  const params = signDownload(grant, key);
  const link = { fileId: grant.fileId, filename: grant.filename, ...params };

  it('verifies a fresh link', () => {
    expect(params.expires).toBe(String(Date.parse('2026-01-01T13:00:00Z') / 1000));
    expect(params.signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verifyDownload(link, key, now)).toBe('ok');
  });

  it('reports a genuine link past its expiry as expired', () => {
    expect(verifyDownload(link, key, new Date('2026-01-01T13:00:00Z'))).toBe('expired');
  });

  it.each([
    ['another file', { fileId: 'someOtherFileId000000000' }],
    ['another filename', { filename: 'payroll.pdf' }],
    ['a later expiry', { expires: String(Number(params.expires) + 3600) }],
    ['a non-numeric expiry', { expires: '1e99' }],
    ['a flipped signature', { signature: params.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }],
    ['a truncated signature', { signature: params.signature.slice(0, 20) }],
    ['no signature', { signature: '' }],
  ])('refuses %s as invalid', (_name, change) => {
    expect(verifyDownload({ ...link, ...change }, key, now)).toBe('invalid');
  });

  it('refuses a link signed with another key, and keys are purpose-bound', () => {
    expect(verifyDownload(link, downloadLinkKey('another-master-secret-of-32-characters!!'), now)).toBe('invalid');
    expect(downloadLinkKey('a-master-secret-of-at-least-32-characters!!').equals(key)).toBe(true);
  });
});
