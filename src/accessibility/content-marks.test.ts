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
});
