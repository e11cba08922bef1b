import { describe, expect, it } from 'vitest';
import { isContextFree, keyedDescendants, liftContextFreeTests, liftParts, type Scope } from './pack-lift.js';

const scope: Scope = { globals: new Set(['documentCurrencyCode']), prefixes: new Set(['ram', 'rsm', 'xs', 'cbc']) };

describe('isContextFree', () => {
  it.each([
    '//rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeSettlement/ram:ApplicableTradeTax',
    "count(//ram:ApplicableTradeTax[ram:CategoryCode='S']) >= 2 or not(//ram:CategoryCode = 'B')",
    "not(//ram:ApplicableTradeTax[ram:CategoryCode != 'O'])",
    'sum(//(ram:A|ram:B)/xs:decimal(ram:C)) = $documentCurrencyCode',
    '/rsm:CrossIndustryInvoice/@id',
    'true()',
  ])('reads nothing of the context: %s', (xpath) => expect(isContextFree(xpath, scope)).toBe(true));

  it.each([
    'ram:LineID',
    '. = 1',
    '@unitCode',
    '../ram:X',
    'not(@unitCode) or (/rsm:X/@unitCode)',
    '//ram:X[. = current()]',
    'position() = 1',
    'normalize-space() != ""',
    '//ram:X = $local',
    'every $x in //ram:X satisfies $x = 1',
    '//other:X',
    '*',
    'child::ram:X',
    '//ram:X (: a comment :)',
  ])('reads the context, a local or an unknown prefix: %s', (xpath) => expect(isContextFree(xpath, scope)).toBe(false));
});

describe('liftParts', () => {
  it('lifts the bracketed part and the argument that read from the root, and keeps the rest', () => {
    const parts: string[] = [];
    const out = liftParts(
      'not(@unitCode) or (/rsm:X/ram:Q/@unitCode) and ram:A = round(sum(/rsm:X/ram:L))',
      scope,
      (part) => {
        parts.push(part);
        return `g${parts.length}`;
      },
    );
    expect(parts).toEqual(['(/rsm:X/ram:Q/@unitCode)', 'sum(/rsm:X/ram:L)']);
    expect(out).toBe('not(@unitCode) or $g1 and ram:A = round($g2)');
  });

  it('lifts nothing from an expression that reads only the context', () => {
    expect(liftParts('ram:A = ram:B', scope, () => 'g')).toBeNull();
  });
});

describe('keyedDescendants', () => {
  const namespaces = new Map([['ram', 'urn:ram']]);
  it('reads //name from the key, with a predicate that is a comparison', () => {
    expect(keyedDescendants("//ram:A/ram:B and //ram:C[ram:D = 'x']", namespaces)).toBe(
      "key('pressroom-elements', '{urn:ram}A', /)/ram:B and key('pressroom-elements', '{urn:ram}C', /)[ram:D = 'x']",
    );
  });
  it.each(['//ram:A[1]', '//ram:A[last()]', '//ram:A[ram:N]', 'ram:B//ram:A', '//*', '//x:A'])(
    'leaves %s as written (a position, an existence test, a relative or unknown path)',
    (xpath) => expect(keyedDescendants(xpath, namespaces)).toBeNull(),
  );
});

describe('liftContextFreeTests', () => {
  const stylesheet = (body: string, root = '') =>
    `<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:ram="urn:ram" version="2.0"${root}>${body}</xsl:stylesheet>`;

  it('writes a context-free test once as a global and reads it in each template', () => {
    const { xslt, lifted, keyed } = liftContextFreeTests(
      stylesheet(
        '<xsl:template match="ram:Line"><xsl:choose><xsl:when test="//ram:Tax"/></xsl:choose>' +
          '<xsl:if test="ram:ID &gt; 1 and //ram:Tax"/></xsl:template>' +
          '<xsl:template match="ram:Other"><xsl:choose><xsl:when test="//ram:Tax"/></xsl:choose></xsl:template>',
      ),
    );
    expect(lifted).toBe(2);
    expect(keyed).toBe(3);
    expect(xslt).toContain(`<xsl:key name="pressroom-elements" match="*"`);
    expect(xslt).toContain(
      `<xsl:variable name="pressroom-lifted-1" select="boolean((key('pressroom-elements', '{urn:ram}Tax', /)))"/>`,
    );
    expect(xslt.match(/test="\$pressroom-lifted-1"/g)).toHaveLength(2);
    // The mixed test keeps its relative part; its root path is read from the key.
    expect(xslt).toContain(`test="ram:ID > 1 and key('pressroom-elements', '{urn:ram}Tax', /)"`);
  });

  it('leaves a stylesheet alone when a prefix means something else below the root', () => {
    const source = stylesheet(
      '<xsl:template match="/" xmlns:ram="urn:other"><xsl:if test="//ram:Tax"/></xsl:template>',
    );
    expect(liftContextFreeTests(source)).toEqual({ xslt: source, lifted: 0, keyed: 0 });
  });

  it('lifts nothing outside templates, and no test that reads a local variable', () => {
    const source = stylesheet(
      '<xsl:function name="ram:f"><xsl:if test="//ram:Tax"/></xsl:function>' +
        '<xsl:template match="/"><xsl:variable name="v" select="1"/><xsl:if test="//ram:Tax[@n = $v]"/></xsl:template>',
    );
    const { xslt } = liftContextFreeTests(source);
    expect(xslt).not.toContain('pressroom-lifted-');
  });
});
