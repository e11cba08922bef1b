/**
 * Child processes under their ceilings, with real programs: qpdf stopped by the address-space ceiling on
 * the two hostile shapes (a vast array, a compression bomb), a busy loop stopped by the CPU ceiling,
 * and the endings that are not a ceiling (an exit status, a deadline, a missing program) told apart.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inflatingPdf, numberArrayPdf } from '../../test/support/documents/hostile-pdfs.js';
import { limitedCommand, runLimited, type ChildCeiling } from './child-limits.js';

const dir = mkdtempSync(join(tmpdir(), 'child-limits-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** qpdf under a 256 MiB ceiling: far below what the hostile files ask for, far above what a small honest one needs. */
const QPDF: ChildCeiling = { memoryBytes: 256 * 1024 * 1024, cpuSeconds: 60, outOfMemory: /std::bad_alloc/ };
const options = (ceiling: ChildCeiling, timeoutMs = 60_000) => ({ cwd: dir, timeoutMs, maxBuffer: 1 << 20, ceiling });
/** What the PDF tools ask qpdf to count pages: it reads every page object (`--show-npages` reads only the page tree's /Count). */
const readPages = (file: string) => runLimited('qpdf', ['--json=2', '--json-key=pages', file], options(QPDF));

describe('runLimited', () => {
  it('runs the program through prlimit with both ceilings, the hard CPU limit a second after the soft one', () => {
    expect(limitedCommand('qpdf', ['--check', 'in.pdf'], { ...QPDF, cpuSeconds: 30 })).toEqual([
      'prlimit',
      ['--as=268435456', '--cpu=30:31', '--', 'qpdf', '--check', 'in.pdf'],
    ]);
  });

  it('passes an ordinary exit through: status, stdout and stderr', async () => {
    writeFileSync(join(dir, 'small.pdf'), numberArrayPdf(3, { in: 'page' }));
    const small = await readPages('small.pdf');
    expect(small).toMatchObject({ ended: 'exit', exitCode: 0, stderr: '' });
    expect(small.ended === 'exit' && JSON.parse(small.stdout).pages).toHaveLength(1);
    writeFileSync(join(dir, 'junk.pdf'), '%PDF-1.7\nnot a PDF at all');
    const junk = await readPages('junk.pdf');
    expect(junk).toMatchObject({ ended: 'exit', exitCode: 2 });
    expect(junk.ended === 'exit' && junk.stderr).toMatch(/junk\.pdf/);
  });

  it('stops qpdf at the memory ceiling on a page of ten million numbers (2.6 GB without it), which qpdf itself reports only as a damaged object', async () => {
    writeFileSync(join(dir, 'numbers.pdf'), numberArrayPdf(10_000_000, { in: 'page' }));
    const run = await readPages('numbers.pdf');
    expect(run).toMatchObject({ ended: 'ceiling', ceiling: 'memory' });
    expect(run.ended === 'ceiling' && run.stderr).toMatch(/std::bad_alloc/);
  });

  it('stops qpdf at the memory ceiling on an object stream that inflates to 400 MB', async () => {
    writeFileSync(join(dir, 'bomb.pdf'), inflatingPdf(400_000_000));
    expect(await readPages('bomb.pdf')).toMatchObject({ ended: 'ceiling', ceiling: 'memory' });
  });

  it('stops a program at the CPU ceiling', async () => {
    const run = await runLimited('sh', ['-c', 'while :; do :; done'], options({ ...QPDF, cpuSeconds: 1 }));
    expect(run).toMatchObject({ ended: 'ceiling', ceiling: 'cpu' });
  });

  it('tells the deadline, a missing program and a signal apart from the ceilings', async () => {
    expect(await runLimited('sleep', ['30'], options(QPDF, 200))).toMatchObject({ ended: 'timeout' });
    expect(await runLimited('pressroom-no-such-program', [], options(QPDF))).toEqual({
      ended: 'missing',
      program: 'pressroom-no-such-program',
    });
    expect(await runLimited('sh', ['-c', 'kill -SEGV $$'], options(QPDF))).toMatchObject({
      ended: 'signal',
      signal: 'SIGSEGV',
    });
  });
});
