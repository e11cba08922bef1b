import { describe, expect, it } from 'vitest';
import { markArtifacts, operations, surveyMarks } from './content-marks.js';

const bytes = (s: string) => Buffer.from(s, 'latin1');
const ops = (s: string) => [...operations(bytes(s))].map((o) => o.op);

describe('content marks', () => {
  it('reads operators past strings, hex strings, dictionaries, arrays, comments and inline images', () => {
    expect(ops('(a (nested) \\) Tj BMC) Tj <4142> Tj [(x) 3 (y)] TJ % f S\n/P <</MCID 3>> BDC EMC')).toEqual([
      'Tj',
      'Tj',
      'TJ',
      'BDC',
      'EMC',
    ]);
    // Binary data holding "EI" and "Tj" inside, ended by a whitespace-framed EI.
    expect(ops('q BI /W 2 /H 1 /BPC 8 /CS /G ID \x00EI\x01Tj\x02 EI Q')).toEqual(['q', 'BI', 'Q']);
  });

  it('wraps each painting operation outside marked content, whole, and leaves tagged content alone', () => {
    const stream =
      '1 0 0 rg 0 0 10 10 re f /P <</MCID 0>> BDC BT /F1 9 Tf (a) Tj ET EMC q 0 0 5 5 re W n /X1 Do Q BT (b) Tj ET';
    const marked = markArtifacts(bytes(stream))!;
    expect(marked.wrapped).toBe(3);
    const text = marked.bytes.toString('latin1');
    expect(text).toContain('/Artifact BMC\n0 0 10 10 re f\nEMC');
    expect(text).toContain('/Artifact BMC\n/X1 Do\nEMC');
    expect(text).toContain('BT /Artifact BMC\n(b) Tj\nEMC\n ET');
    expect(text).toContain('/P <</MCID 0>> BDC BT /F1 9 Tf (a) Tj ET EMC');
    expect(text).toContain('0 0 5 5 re W n'); // a clip paints nothing
    expect(surveyMarks(marked.bytes).unmarked).toEqual([]);
    expect(markArtifacts(marked.bytes)).toBeNull();
  });

  it('finds tagged content inside an artifact', () => {
    expect(surveyMarks(bytes('/Artifact BMC /P <</MCID 1>> BDC (x) Tj EMC EMC')).taggedInArtifact).toBe(1);
  });

  it("types what Chromium's header and footer group paints as pagination, not what the body's nested clips paint", () => {
    // Chromium's page: a background group, the clipped body (with a nested overflow clip), then the
    // header/footer group beside it — entered while the body's last tagged span is still open.
    const stream = [
      'q 0 0 9 9 re f Q',
      'q 0 20 100 60 re W* n q /P <</MCID 0>> BDC BT (body) Tj ET EMC q 0 0 5 5 re W n 0 0 5 5 re f Q',
      '/P <</MCID 1>> BDC BT (last) Tj ET Q Q',
      'q 0 0 100 100 re W* n q EMC BT (Page 1) Tj ET 0 0 3 3 re f Q Q',
    ].join('\n');
    const text = markArtifacts(bytes(stream))!.bytes.toString('latin1');
    expect(text).toContain('/Artifact BMC\n0 0 9 9 re f\nEMC'); // background: untyped
    expect(text).toContain('/Artifact BMC\n0 0 5 5 re f\nEMC'); // the body's own clip: untyped
    expect(text).toContain('/Artifact <</Type /Pagination>> BDC\n(Page 1) Tj\nEMC');
    expect(text).toContain('/Artifact <</Type /Pagination>> BDC\n0 0 3 3 re f\nEMC');
    expect(surveyMarks(bytes(text)).unmarked).toEqual([]);
  });

  it('types a watermark stream as a pagination watermark, and reads typed artifacts as artifacts', () => {
    const text = markArtifacts(bytes('q /GS0 gs 1 0 0 1 9 9 cm /X1 Do Q'), 'watermark')!.bytes.toString('latin1');
    expect(text).toContain('/Artifact <</Type /Pagination /Subtype /Watermark>> BDC\n/X1 Do\nEMC');
    const nested = '/Artifact <</Type /Layout>> BDC /P <</MCID 2>> BDC (x) Tj EMC EMC';
    expect(surveyMarks(bytes(nested)).taggedInArtifact).toBe(1);
  });
});
