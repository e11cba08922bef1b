/**
 * The lifted rules judge as the published ones (issue 52): the pack's stylesheets, with their
 * context-free tests lifted into globals and `//name` read from a key (src/einvoice/rules/pack-lift.ts),
 * fire the same rules at the same places, with the same words, as the stylesheets exactly as published,
 * on every official example (CEN's CII and UBL examples, KoSIT's XRechnung test suite), on broken copies
 * of them, and on long generated invoices with broken copies. Both packs are installed the operator's
 * way from the publishers' files; each XML is judged by both in this process with SaxonJS.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEInvoice } from '../../../src/einvoice/einvoice.js';
import type { StylesheetId } from '../../../src/einvoice/rules/pack-build.js';
import { readActivePack, type ActivePack } from '../../../src/einvoice/rules/pack-store.js';
import { parseForRules, runSchematron, type SvrlEntry } from '../../../src/einvoice/rules/svrl.js';
import { SAMPLE_INVOICE } from '../../support/documents/einvoice-samples.js';
import {
  EXAMPLES,
  HAS_SHARED_RULES,
  INSTALL_TIMEOUT_MS,
  installPublishedRulesPack,
  installRulesPack,
} from '../../support/einvoice-rules.js';

type Syntax = 'cii' | 'ubl';
const STYLESHEETS: Record<Syntax, StylesheetId[]> = {
  cii: ['en16931-cii', 'xrechnung-cii'],
  ubl: ['en16931-ubl', 'xrechnung-ubl'],
};

/** Broken copies: each a change a receiver's rules must notice (sums, VAT categories, currency). */
const BREAKS: Record<Syntax, { name: string; from: RegExp; to: (match: string, value: string) => string }[]> = {
  cii: [
    {
      name: 'line total',
      from: /(<ram:LineTotalAmount>)([\d.]+)/,
      to: (_, v) => `<ram:LineTotalAmount>${Number(v) + 1}`,
    },
    ...['AE', 'K', 'G', 'O', 'Z', 'E', 'L'].map((code) => ({
      name: `line VAT category ${code}`,
      from: /(<ram:SpecifiedLineTradeSettlement>\s*<ram:ApplicableTradeTax>[\s\S]*?<ram:CategoryCode>)(\w+)/,
      to: (m: string, v: string) => m.slice(0, m.length - v.length) + code,
    })),
    { name: 'currency', from: /(<ram:InvoiceCurrencyCode>)(\w+)/, to: () => '<ram:InvoiceCurrencyCode>USD' },
  ],
  ubl: [
    {
      name: 'line total',
      from: /(<cac:(?:InvoiceLine|CreditNoteLine)>[\s\S]*?<cbc:LineExtensionAmount[^>]*>)([\d.]+)/,
      to: (m, v) => m.slice(0, m.length - v.length) + String(Number(v) + 1),
    },
    ...['AE', 'K', 'G', 'O', 'Z', 'E', 'L'].map((code) => ({
      name: `line VAT category ${code}`,
      from: /(<cac:ClassifiedTaxCategory>\s*<cbc:ID>)(\w+)/,
      to: (m: string, v: string) => m.slice(0, m.length - v.length) + code,
    })),
    { name: 'currency', from: /(<cbc:DocumentCurrencyCode>)(\w+)/, to: () => '<cbc:DocumentCurrencyCode>USD' },
  ],
};

const syntaxOf = (xml: string): Syntax => (/<(?:\w+:)?CrossIndustryInvoice[\s>]/.test(xml) ? 'cii' : 'ubl');

describe.skipIf(!HAS_SHARED_RULES)('the lifted rules judge as the published ones', () => {
  const dirs: string[] = [];
  const sefs = new Map<string, unknown>();
  let lifted: ActivePack;
  let published: ActivePack;

  beforeAll(async () => {
    const liftedDir = mkdtempSync(join(tmpdir(), 'rules-lifted-'));
    const publishedDir = mkdtempSync(join(tmpdir(), 'rules-published-'));
    dirs.push(liftedDir, publishedDir);
    await Promise.all([installRulesPack(liftedDir), installPublishedRulesPack(publishedDir)]);
    lifted = (await readActivePack(liftedDir))!;
    published = (await readActivePack(publishedDir))!;
  }, INSTALL_TIMEOUT_MS);
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  function run(pack: ActivePack, id: StylesheetId, document: unknown): SvrlEntry[] {
    const path = pack.stylesheets[id].path;
    let sef = sefs.get(path);
    if (!sef) sefs.set(path, (sef = JSON.parse(readFileSync(path, 'utf8'))));
    return runSchematron(sef, document);
  }

  /** Judges `xml` with both packs; expects the same findings from each stylesheet; returns how many fired. */
  function judgeBoth(name: string, xml: string): number {
    const syntax = syntaxOf(xml);
    const document = parseForRules(xml);
    let fired = 0;
    for (const id of STYLESHEETS[syntax]) {
      const expected = run(published, id, document);
      expect(run(lifted, id, document), `${name}: ${id}`).toEqual(expected);
      fired += expected.length;
    }
    return fired;
  }

  /** `xml` and its broken copies (the ones whose change applies), each judged by both. */
  function judgeWithBroken(
    name: string,
    xml: string,
    breaks = BREAKS[syntaxOf(xml)],
  ): { judged: number; fired: number } {
    let judged = 1;
    let fired = judgeBoth(name, xml);
    for (const b of breaks) {
      const copy = xml.replace(b.from, (m, _open: string, value: string) => b.to(m, value));
      if (copy === xml) continue;
      judged++;
      fired += judgeBoth(`${name}, broken ${b.name}`, copy);
    }
    return { judged, fired };
  }

  it('the pack is lifted and the reference is not', () => {
    expect(lifted.description.id).not.toBe(published.description.id);
    const text = (pack: ActivePack) => readFileSync(pack.stylesheets['en16931-ubl'].path, 'utf8');
    // includes(), not toContain(): a failure would print the whole 5 MB stylesheet.
    expect(text(lifted).includes('pressroom-lifted-'), 'lifted globals in the pack').toBe(true);
    expect(text(lifted).includes('pressroom-elements'), 'the element key in the pack').toBe(true);
    expect(text(published).includes('pressroom-'), 'anything of ours in the published stylesheet').toBe(false);
  });

  it('on every official example and KoSIT test file, and on broken copies of them', () => {
    const files = Object.values(EXAMPLES).flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.xml'))
        .map((f) => join(dir, f)),
    );
    expect(files.length).toBeGreaterThanOrEqual(70);
    let judged = 0;
    let fired = 0;
    files.forEach((file, i) => {
      const xml = readFileSync(file, 'utf8');
      // Two of the breaks per file, turn by turn: every break is applied to several files.
      const all = BREAKS[syntaxOf(xml)];
      const two = [all[i % all.length]!, all[(i + 3) % all.length]!];
      const r = judgeWithBroken(file.split('/').slice(-2).join('/'), xml, two);
      judged += r.judged;
      fired += r.fired;
    });
    expect(judged).toBeGreaterThan(files.length * 2);
    // The broken copies make rules fire: the comparison is of findings, not of two empty lists.
    expect(fired).toBeGreaterThan(judged);
    // Some 450 runs of the official rules in this process: minutes on a loaded 2-core machine; a guard, not a figure.
  }, 600_000);

  it('on long invoices made from JSON, and on broken copies of them', async () => {
    let fired = 0;
    for (const format of ['xrechnung-cii', 'xrechnung-ubl'] as const) {
      const invoice = {
        ...SAMPLE_INVOICE,
        lines: Array.from({ length: 120 }, (_, i) => ({ ...SAMPLE_INVOICE.lines[i % 3]!, id: String(i + 1) })),
      };
      const { xml } = await buildEInvoice({ format, invoice }, { accountId: 'test' });
      const r = judgeWithBroken(`${format}, 120 lines`, xml);
      expect(r.judged).toBeGreaterThanOrEqual(8);
      fired += r.fired;
    }
    expect(fired).toBeGreaterThan(20);
  }, 600_000);
});
