/**
 * Builds the rules pack's stylesheets from its verified sources, once, at install time:
 * - the CEN EN 16931 CII and UBL schematrons, published compiled to XSLT 2, are compiled to SEF;
 * - KoSIT's XRechnung rules are built as KoSIT's build.xml builds them: the `.sch` sources copied with
 *   its two tokens filtered (`prepare-build-dir`), the whitelisted Peppol BIS rules merged in with its
 *   `peppol-into-xr.xsl` (`merge-peppol-rules-with-xr-rules`, which reads `../../build/bis/*.sch` and
 *   `rule-list.xml` beside itself, so the same layout is made here), compiled to XSLT with SchXslt's
 *   `pipeline-for-svrl.xsl` (`compile-schematron-rules`), then to SEF like the CEN ones.
 * Before each XSLT becomes SEF, its context-free tests are lifted into globals (pack-lift.ts): the
 * same verdicts in time linear in the invoice's lines.
 * SEF is SaxonJS's compiled form: a validation thread loads it in tens of milliseconds, where compiling
 * the CEN stylesheet takes seconds and half a gigabyte.
 *
 * Every step is SaxonJS's `xslt3` command in a child process with a heap, address-space and CPU ceiling
 * (shared/child-limits.ts), two at a time (the machine's two cores; the CEN UBL compile alone takes
 * about 30 s of CPU there).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { runLimited, type ChildCeiling } from '../../shared/child-limits.js';
import { pinned, SOURCES, XRECHNUNG_VERSION } from './manifest.js';
import { liftContextFreeTests } from './pack-lift.js';
import { RulesPackError } from './pack-sources.js';

/** The stylesheets a pack holds, by the check they run. */
export const STYLESHEETS = ['en16931-cii', 'en16931-ubl', 'xrechnung-cii', 'xrechnung-ubl'] as const;
export type StylesheetId = (typeof STYLESHEETS)[number];

const require = createRequire(import.meta.url);
const XSLT3 = require.resolve('xslt3/xslt3.js');
/** The compiler's version: part of the compile cache's key (another SaxonJS may write other SEF). */
export const XSLT3_VERSION = (require('xslt3/package.json') as { version: string }).version;
/** How pack.json names the compiler; a pack compiled by another one is not used (SaxonJS reads the SEF its own compiler writes). */
export const COMPILER = `xslt3 ${XSLT3_VERSION} (SaxonJS)`;

/**
 * One xslt3 run's ceilings. Heap: the CEN UBL compile peaks near 600 MB resident; 1.5 GiB of V8 heap
 * leaves room. Address space: V8 reserves well past its heap; 3 GiB holds with global fetch off (Node's
 * fetch reserves WebAssembly memory the compiler never uses). CPU: ten times the slowest compile measured.
 */
const XSLT3_HEAP_MB = 1536;
const XSLT3_CEILING: ChildCeiling = {
  memoryBytes: 3 * 1024 ** 3,
  cpuSeconds: 300,
  outOfMemory: /heap out of memory|Out of memory|ENOMEM/i,
};
const XSLT3_TIMEOUT_MS = 600_000;

/** Runs xslt3 with `args` in `cwd`; throws RulesPackError with its last words when it fails. */
async function xslt3(args: string[], cwd: string, what: string): Promise<void> {
  const result = await runLimited(
    process.execPath,
    ['--no-experimental-fetch', `--max-old-space-size=${XSLT3_HEAP_MB}`, XSLT3, ...args],
    {
      cwd,
      timeoutMs: XSLT3_TIMEOUT_MS,
      maxBuffer: 16 << 20,
      ceiling: XSLT3_CEILING,
    },
  );
  if (result.ended === 'exit' && result.exitCode === 0) return;
  const words = 'stderr' in result ? result.stderr.trim().split('\n').slice(-5).join(' | ') : '';
  const how =
    result.ended === 'exit'
      ? `exit code ${result.exitCode}`
      : result.ended === 'ceiling'
        ? `past its ${result.ceiling} ceiling`
        : result.ended === 'missing'
          ? `${result.program} is not installed`
          : result.ended === 'signal'
            ? `ended by ${result.signal}`
            : result.ended;
  throw new RulesPackError(`${what} failed (${how})${words ? `: ${words}` : ''}`);
}

/** The file name of a stylesheet's SEF in the pack's `compiled/`. */
export const sefName = (id: StylesheetId): string => `${id}.sef.json`;

const KOSIT_SCH = {
  cii: 'src/validation/schematron/cii/XRechnung-CII-validation.sch',
  ubl: 'src/validation/schematron/ubl/XRechnung-UBL-validation.sch',
} as const;
const SYNTAX = {
  cii: { param: 'CII', name: 'XRechnung-CII-validation' },
  ubl: { param: 'UBL', name: 'XRechnung-UBL-validation' },
} as const;

/** Lays out KoSIT's build directory under `work` from the sources (as build.xml's prepare-build-dir does). */
async function prepareKositBuild(sourceDir: string, work: string): Promise<void> {
  const copy = async (from: string, to: string, filter?: (text: string) => string) => {
    await mkdir(dirname(join(work, to)), { recursive: true });
    const bytes = await readFile(join(sourceDir, from));
    await writeFile(join(work, to), filter ? filter(bytes.toString('utf8')) : bytes);
  };
  // build.xml's <filter> tokens: the schematron's own version and the XRechnung version it is for.
  const tokens = (text: string) =>
    text
      .replaceAll('@xr-schematron.version.full@', SOURCES.xrechnung.version)
      .replaceAll('@xrechnung.version@', XRECHNUNG_VERSION);
  await copy(pinned('xrechnung', 'src/xsl/peppol-into-xr.xsl'), 'src/xsl/peppol-into-xr.xsl');
  await copy(pinned('xrechnung', 'src/xsl/rule-list.xml'), 'src/xsl/rule-list.xml');
  await copy(pinned('peppol', 'rules/sch/PEPPOL-EN16931-CII.sch'), 'build/bis/PEPPOL-EN16931-CII.sch');
  await copy(pinned('peppol', 'rules/sch/PEPPOL-EN16931-UBL.sch'), 'build/bis/PEPPOL-EN16931-UBL.sch');
  await copy(pinned('xrechnung', 'src/validation/schematron/common.sch'), 'build/schematron/common.sch');
  for (const syntax of ['cii', 'ubl'] as const) {
    await copy(pinned('xrechnung', KOSIT_SCH[syntax]), `build/schematron/tmp/${SYNTAX[syntax].name}.sch`, tokens);
  }
}

/** KoSIT's rules for one syntax: merge, compile with SchXslt, then to SEF. */
async function buildKosit(o: Lane, syntax: 'cii' | 'ubl'): Promise<void> {
  const { sourceDir, workDir: work, outDir, log } = o;
  const { param, name } = SYNTAX[syntax];
  const merged = `build/schematron/${syntax}/${name}.sch`;
  log(`XRechnung ${syntax.toUpperCase()}: merging the Peppol BIS rules (KoSIT's peppol-into-xr.xsl)`);
  await mkdir(join(work, 'build/schematron', syntax), { recursive: true });
  await xslt3(
    [`-xsl:src/xsl/peppol-into-xr.xsl`, `-s:build/schematron/tmp/${name}.sch`, `-o:${merged}`, `syntax=${param}`],
    work,
    `Merging the Peppol rules into XRechnung ${param}`,
  );
  log(`XRechnung ${syntax.toUpperCase()}: compiling the schematron to XSLT (SchXslt)`);
  const pipeline = join(sourceDir, pinned('schxslt', 'core/src/main/resources/xslt/2.0/pipeline-for-svrl.xsl'));
  await xslt3(
    [`-xsl:${pipeline}`, `-s:${merged}`, `-o:build/schematron/${syntax}/${name}.xsl`],
    work,
    `Compiling XRechnung ${param} with SchXslt`,
  );
  if (!o.published) await liftFile(join(work, `build/schematron/${syntax}/${name}.xsl`), `XRechnung ${param}`, log);
  log(`XRechnung ${syntax.toUpperCase()}: compiling to SEF`);
  await xslt3(
    [
      `-xsl:build/schematron/${syntax}/${name}.xsl`,
      `-export:${join(outDir, sefName(`xrechnung-${syntax}`))}`,
      '-nogo',
      '-relocate:on',
    ],
    work,
    `Compiling XRechnung ${param} to SEF`,
  );
}

/** The CEN schematron of one syntax, published as XSLT, to SEF. */
async function buildCen(o: Lane, syntax: 'cii' | 'ubl'): Promise<void> {
  const { sourceDir, outDir, log } = o;
  const published = join(
    sourceDir,
    pinned('en16931', `${syntax}/xslt/EN16931-${syntax.toUpperCase()}-validation.xslt`),
  );
  // The CEN XSLT includes no other file, so its lifted copy compiles from the build directory.
  const xslt = o.published ? published : join(o.workDir, 'cen', `EN16931-${syntax.toUpperCase()}-validation.xslt`);
  if (!o.published) {
    await mkdir(dirname(xslt), { recursive: true });
    await writeFile(xslt, await readFile(published));
    await liftFile(xslt, `EN 16931 ${syntax.toUpperCase()}`, log);
  }
  log(`EN 16931 ${syntax.toUpperCase()}: compiling the CEN XSLT to SEF`);
  await xslt3(
    [`-xsl:${xslt}`, `-export:${join(outDir, sefName(`en16931-${syntax}`))}`, '-nogo', '-relocate:on'],
    outDir,
    `Compiling the CEN ${syntax.toUpperCase()} XSLT to SEF`,
  );
}

/** What a compile works on. */
export interface CompileOptions {
  /** The verified sources. */
  readonly sourceDir: string;
  /** Scratch: KoSIT's build directory and the lifted CEN stylesheets. */
  readonly workDir: string;
  /** Where the SEFs go. */
  readonly outDir: string;
  /** Compile the stylesheets exactly as published, nothing lifted: what the tests compare the pack with. */
  readonly published?: boolean;
}
type Lane = CompileOptions & { readonly log: (line: string) => void };

/** Lifts the context-free tests of the XSLT at `path` in place (pack-lift.ts). */
async function liftFile(path: string, what: string, log: (line: string) => void): Promise<void> {
  const { xslt, lifted, keyed } = liftContextFreeTests(await readFile(path, 'utf8'));
  await writeFile(path, xslt);
  log(
    `${what}: ${lifted} tests evaluated once per check instead of once per node, ${keyed} find elements by name from an index`,
  );
}

/**
 * Compiles the four stylesheets from the verified sources into `outDir`, in two lanes at once. Throws
 * RulesPackError when a step fails.
 */
export async function compilePack(options: CompileOptions, log: (line: string) => void): Promise<void> {
  const { sourceDir, workDir, outDir } = options;
  const lane: Lane = { ...options, log };
  await mkdir(outDir, { recursive: true });
  await prepareKositBuild(sourceDir, workDir);
  // Both lanes settle before a failure is reported: the caller removes the directories they write in.
  const lanes = await Promise.allSettled([
    (async () => {
      await buildCen(lane, 'cii');
      await buildCen(lane, 'ubl');
    })(),
    (async () => {
      await buildKosit(lane, 'cii');
      await buildKosit(lane, 'ubl');
    })(),
  ]);
  const failed = lanes.find((lane): lane is PromiseRejectedResult => lane.status === 'rejected');
  if (failed) throw failed.reason;
}
