/**
 * What the template API accepts as a page margin is what prints: every CSS unit the save schema takes
 * is saved, generated through the API with real Chromium, and lands where it says (a `pc` margin once
 * saved fine and then failed every generation with 400, because the renderer knew no `pc`). One
 * SQLite app and one small document per unit; the rule is not dialect-specific.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfInfo, pdfWordBoxes } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

/** CSS absolute units and how many make an inch (CSS Values 4), plus relative ones no page can resolve. */
const INCH_IN: Record<string, number> = { px: 96, in: 1, cm: 2.54, mm: 25.4, pt: 72, pc: 6, Q: 101.6 };
const CANDIDATE_UNITS = [...Object.keys(INCH_IN), 'q', 'em', 'rem', 'ex', 'ch', 'vw', 'vh', '%', ''];
const POINTS_PER_INCH = 72;

describe('page margins: accepted at save means printed at generation', () => {
  let t: TestApp;
  let apiKey: string;

  /** Saves a template whose left and top margins are `margin`; its id, or the 422 body. */
  const save = async (margin: string) => {
    const res = await t.request('POST', '/v1/templates', {
      apiKey,
      body: {
        name: `margin ${margin}`,
        html: '<p>MARK</p>',
        css: 'html, body, p { margin: 0; padding: 0 }',
        page: { format: 'A4', margin: { left: margin, top: margin } },
      },
    });
    return res;
  };

  /** Where the word MARK starts on page 1, in points from the left edge. */
  const markLeftEdge = async (templateId: string) => {
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey,
      body: { template_id: templateId, export_type: 'binary', data: {} },
    });
    expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
    const mark = pdfWordBoxes(res.bytes).find((w) => w.word === 'MARK');
    expect(mark, 'the word MARK on page 1').toBeDefined();
    return mark!.xMin;
  };

  beforeAll(async () => {
    t = await startTestApp('sqlite', { PRESSROOM_RENDER_CONCURRENCY: '1' });
    ({ apiKey } = await t.createAccount({ credits: 100, plan: 'enterprise' }));
  });
  afterAll(async () => t?.close());

  it('prints a one-inch margin one inch from the edge in every unit the schema accepts, and refuses the others at save', async () => {
    const accepted: string[] = [];
    for (const unit of CANDIDATE_UNITS) {
      const margin = `${INCH_IN[unit] ?? 1}${unit}`;
      const saved = await save(margin);
      if (saved.status === 422) {
        expect(saved.body.detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual(
          expect.arrayContaining(['body.page.margin.left']),
        );
        continue;
      }
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
      expect(
        INCH_IN[unit],
        `the schema accepts "${margin}"; this test must know how long one ${unit} is`,
      ).toBeDefined();
      accepted.push(unit);
      expect(await markLeftEdge(saved.body.id), `left edge of the text with a ${margin} margin`).toBeCloseTo(
        POINTS_PER_INCH,
        0,
      );
    }
    // The units operators use, pc among them (the unit that once saved but never printed).
    expect(accepted).toEqual(expect.arrayContaining(['px', 'in', 'cm', 'mm', 'pt', 'pc']));
  });

  it('prints a margin of 0 at the edge', async () => {
    const saved = await save('0');
    expect(saved.status).toBe(201);
    expect(await markLeftEdge(saved.body.id)).toBeCloseTo(0, 0);
  });

  it('saves and prints a custom paper size and a size CSS names (B5), and refuses half a size or a size with a format at save', async () => {
    const points = (pdf: Buffer) =>
      (/^([\d.]+) x ([\d.]+) pts/.exec(pdfInfo(pdf)['Page size'] ?? '') ?? []).slice(1).map(Number);
    for (const [page, expected] of [
      [{ width: '100mm', height: '150mm' }, [283.46, 425.2]],
      [{ width: '4in', height: '6in', orientation: 'landscape' }, [432, 288]],
      [{ format: 'B5' }, [498.9, 708.66]],
    ] as const) {
      const saved = await t.request('POST', '/v1/templates', {
        apiKey,
        body: { name: 'paper', html: '<p>MARK</p>', page },
      });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
      const res = await t.request('POST', '/v1/pdf/create', {
        apiKey,
        body: { template_id: saved.body.id, export_type: 'binary', data: {} },
      });
      expect(res.status).toBe(200);
      // Chromium rounds the paper to its own units (100 mm = 283.46 pt prints as 284): within 1.5 pt.
      const printed = points(res.bytes);
      expect(printed.length, JSON.stringify(page)).toBe(2);
      printed.forEach((value, i) =>
        expect(
          Math.abs(value - expected[i]!),
          `${JSON.stringify(page)}: ${printed.join(' x ')} pt`,
        ).toBeLessThanOrEqual(1.5),
      );
    }
    for (const [page, loc] of [
      [{ width: '100mm' }, 'body.page.height'],
      [{ format: 'A4', width: '1in', height: '1in' }, 'body.page.format'],
      [{ width: '0', height: '1in' }, 'body.page.width'],
      [{ width: '10em', height: '1in' }, 'body.page.width'],
      [{ format: 'A7' }, 'body.page.format'],
    ] as const) {
      const refused = await t.request('POST', '/v1/templates', {
        apiKey,
        body: { name: 'paper', html: '<p>x</p>', page },
      });
      expect(refused.status, JSON.stringify(page)).toBe(422);
      expect(
        refused.body.detail.map((d: { loc: string[] }) => d.loc.join('.')),
        JSON.stringify(page),
      ).toContain(loc);
    }
  });
});
