/**
 * A render that runs out of time answers RENDER_TIMEOUT, which says nothing of where it was; the
 * operator's log does: one warning with the stage (waiting for a browser, for the slot's pages, in
 * the template, printing), the time spent in it and the document's size. The deadline here is long
 * enough for a busy machine to reach each stage well within it.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../shared/log.js';
import { testDependencies, testOptions, warmUpPatiently } from '../../test/support/documents/rendering-kit.js';
import { until } from '../../test/support/until.js';
import { createPdfRenderer, type PdfRenderer } from './pdf-renderer.js';

const TIMEOUT_MS = 10_000;
const OUT_OF_TIME = 'a render ran out of time';

describe('the log line of a render that ran out of time', () => {
  const lines: Array<Record<string, unknown>> = [];
  let renderer: PdfRenderer;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    // The template limit above the render deadline, so that the deadline is what stops an endless template.
    const options = testOptions({ timeoutMs: TIMEOUT_MS, templateTimeoutMs: 60_000 });
    renderer = createPdfRenderer(options, createLogger('warn', sink), testDependencies(options));
    await warmUpPatiently(renderer);
  }, 120_000);
  afterAll(async () => renderer?.close());

  const outOfTime = async () => {
    const line = await until(() => lines.find((entry) => entry.msg === OUT_OF_TIME), 10_000, 'the warning');
    lines.length = 0;
    return line;
  };

  it('a document that never says it is ready: stopped while printing, its size and its times logged', async () => {
    const html = '<p>WAITING</p><script>window.pressroomReady = new Promise(() => {});</script>';
    await expect(renderer.render({ template: { html }, data: {} })).rejects.toMatchObject({ code: 'RENDER_TIMEOUT' });
    const line = await outOfTime();
    expect(line).toMatchObject({ stage: 'print', timeoutMs: TIMEOUT_MS, mode: 'sync' });
    expect(line.htmlChars).toBeGreaterThanOrEqual(html.length);
    expect(line).toMatchObject({ stageMs: expect.any(Number), elapsedMs: expect.any(Number) });
  }, 60_000);

  it('an endless template: stopped in the template stage, before there is any HTML', async () => {
    const html = '{% for i in range(0, 100000) %}{% for j in range(0, 100000) %}{% endfor %}{% endfor %}';
    await expect(renderer.render({ template: { html }, data: {} })).rejects.toMatchObject({ code: 'RENDER_TIMEOUT' });
    const line = await outOfTime();
    expect(line).toMatchObject({ stage: 'template', timeoutMs: TIMEOUT_MS });
    expect(line.htmlChars).toBeUndefined();
  }, 60_000);

  it('a document that renders logs no such warning', async () => {
    const result = await renderer.render({ template: { html: '<p>{{ n }}</p>' }, data: { n: 'fine' } });
    expect(result.pdf.length).toBeGreaterThan(0);
    expect(lines.filter((entry) => entry.msg === OUT_OF_TIME)).toEqual([]);
  }, 60_000);
});
