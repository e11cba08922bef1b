import { describe, expect, it } from 'vitest';
import { attachmentDisposition, safeFilename } from './content-disposition.js';

describe('safeFilename', () => {
  it.each([
    ['invoice-42.pdf', 'invoice-42.pdf'],
    ['Q3 report (final).pdf', 'Q3_report__final_.pdf'],
    ['../../etc/passwd', '_.._etc_passwd'],
    ['..pdf', 'pdf'],
    ['a"b;c\r\nd.pdf', 'a_b_c__d.pdf'],
    ['', 'document'],
    ['///', 'document'],
    ['Rechnung-Müller.pdf', 'Rechnung-M_ller.pdf'],
  ])('%j → %j', (input, expected) => {
    expect(safeFilename(input)).toBe(expected);
  });
});

describe('attachmentDisposition', () => {
  it('quotes a spec-conforming name as is', () => {
    expect(attachmentDisposition('invoice-42.pdf')).toBe(
      `attachment; filename="invoice-42.pdf"; filename*=UTF-8''invoice-42.pdf`,
    );
  });

  it('keeps the exact name only percent-encoded, and nothing can break out of the header', () => {
    const header = attachmentDisposition('Rechnung "Müller";\r\nX-Evil: 1.pdf');
    expect(header).toBe(
      `attachment; filename="Rechnung__M_ller____X-Evil__1.pdf"; filename*=UTF-8''Rechnung%20M%C3%BCller%3BX-Evil%3A%201.pdf`,
    );
    expect(header).not.toMatch(/[\r\n]/);
    expect(header.match(/"/g)).toHaveLength(2);
  });

  it('drops path separators and leading dots from the exact name', () => {
    expect(attachmentDisposition('../secret.pdf')).toBe(
      `attachment; filename="_secret.pdf"; filename*=UTF-8''secret.pdf`,
    );
  });
});
