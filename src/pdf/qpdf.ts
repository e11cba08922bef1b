/**
 * The PDF tools' engine: qpdf (Debian's `qpdf` package, installed with the service), run as a child
 * process on files in a per-call temporary directory.
 *
 * Why qpdf and not @cantoo/pdf-lib (docs/pdf-tools.md "Why qpdf"; the figures are in the performance log): the inputs are
 * customers' files of up to PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES. qpdf works off the event loop, in a
 * process of its own that the deadline kills outright, so a huge or hostile file costs that request and
 * nothing else; pdf-lib parses and writes on the event loop (seconds of CPU there for a long tagged
 * report or a large scan: docs/performance-log/2026-11-23-to-28-pdf-libraries.md) and cannot be interrupted. qpdf also brings what the tools need
 * built in: page selection in any order, rotations relative to the page's own (inherited ones too),
 * and reliable encryption and damage detection. Its cost: a process per call, and about three times
 * pdf-lib's CPU on Chromium's heavily tagged output (tens of thousands of small objects).
 *
 * Each run has a memory and a CPU ceiling (shared/child-limits.ts): a run past one is stopped and
 * answers PDF_TOO_COMPLEX, whatever it had made.
 *
 * Exit codes: 0 success, 3 success with warnings (a damaged file qpdf repaired), 2 failure.
 *
 * Who runs next is the fair scheduler's choice (../scheduling/fair-scheduler.ts), a strict pool: a
 * hostile file (one that inflates to hundreds of MiB) keeps its run for the whole deadline, and it
 * cannot be taken back, so one account never holds more than `concurrency` − 1 runs (issue 37).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLimited, type ChildCeiling } from '../shared/child-limits.js';
import { AppError } from '../shared/errors.js';
import { accountSlotsOf, FairScheduler, type PoolStats, type TaskKind } from '../scheduling/fair-scheduler.js';

/** What qpdf read of one input: its page count, or why it cannot be used. */
export type PdfInspection =
  | {
      kind: 'pdf';
      pages: number;
      /** Opened with the password given. */
      encrypted?: boolean;
      /** Signed signature fields with a widget on a page (qpdf lists a form's fields by their widgets). */
      signedFields: number;
    }
  | { kind: 'encrypted' }
  | { kind: 'unreadable'; reason: string };

/** What an encrypted copy allows without the owner password (AES-256, finishing/protect.ts). */
export interface PdfProtection {
  /** Opens the file; empty: anyone may open it, the permissions still hold. */
  userPassword: string;
  /** Lifts the permissions (and opens the file). */
  ownerPassword: string;
  permissions: {
    printing: 'high' | 'low' | 'none';
    copying: boolean;
    modifying: boolean;
    annotating: boolean;
    fillingForms: boolean;
  };
}

/** An embedded file read out of a PDF (POST /v1/einvoice/validate: a Factur-X / ZUGFeRD invoice's XML). */
export type EmbeddedFile =
  | { kind: 'file'; name: string; text: string }
  /** The PDF has none of the names asked for; `names`: the embedded files it has. */
  | { kind: 'none'; names: string[] }
  | { kind: 'encrypted' }
  | { kind: 'unreadable'; reason: string }
  /** Larger than the bound asked for (`bytes`: more than that bound). */
  | { kind: 'too-large'; name: string; bytes: number };

/** A rotation qpdf adds to pages' own: `pages` are 1-based, or every page. */
export interface PageRotation {
  angle: 90 | 180 | 270;
  pages: number[] | 'all';
}

/**
 * The operations the PDF tools run, each on its own temporary files, for `accountId` (every run is
 * paid work). Each may be refused with SERVICE_UNAVAILABLE (503) when the line is full or no run
 * became free within the deadline, or RATE_LIMITED (429) when the account has too many waiting.
 */
export interface Qpdf {
  /**
   * Page count, or encrypted, or unreadable (with qpdf's reason); never throws for a bad file. With
   * `password`, an encrypted file that password opens counts as a PDF; a wrong one reads `encrypted`.
   */
  inspect(pdf: Buffer, accountId: string, password?: string): Promise<PdfInspection>;
  /**
   * The inputs' pages one after another, in the order given; written without object streams, the pages'
   * /StructParents kept while the structure tree is dropped (merge.ts reads them to tell a tagged input).
   */
  merge(pdfs: Buffer[], accountId: string): Promise<Buffer>;
  /** The given pages (1-based, repeats allowed) in the order given. */
  selectPages(pdf: Buffer, pages: number[], accountId: string): Promise<Buffer>;
  /** The document with the rotations added to its pages' own. */
  rotate(pdf: Buffer, rotations: PageRotation[], accountId: string): Promise<Buffer>;
  /** Parts of the document: each run of pages (1-based, in order) one file, from one qpdf run per part. */
  splitPages(pdf: Buffer, parts: number[][], accountId: string): Promise<Buffer[]>;
  /**
   * The same document with every object outside object streams, read under qpdf's ceilings: what a
   * PDF library that inflates object streams without a bound (pdf-lib) may then load safely. `kind`:
   * free work (POST /v1/pdf-tools/check-accessibility) leaves slots to paid runs.
   */
  withoutObjectStreams(pdf: Buffer, accountId: string, kind: TaskKind): Promise<Buffer>;
  /** Form fields and annotations drawn into the page content; the form (AcroForm) is gone. */
  flatten(pdf: Buffer, accountId: string): Promise<Buffer>;
  /** An AES-256 copy with these passwords and permissions; object streams are kept. */
  encrypt(pdf: Buffer, protection: PdfProtection, accountId: string): Promise<Buffer>;
  /** The document without its encryption; INVALID_PASSWORD-shaped `undefined` when the password does not open it. */
  decrypt(pdf: Buffer, password: string, accountId: string): Promise<Buffer | undefined>;
  /**
   * Merges PDF files of `dir` into `dir/<out>`, each part's first page an outline entry with its title
   * (a batch's merged output); qpdf reads the inputs from disk, so none of them is held in memory.
   */
  mergeFiles(o: {
    dir: string;
    parts: { name: string; title: string; pages: number }[];
    out: string;
    accountId: string;
  }): Promise<void>;
  /**
   * The first embedded file (by attachment key or file name, case-insensitive) among `names`, as UTF-8
   * text of at most `maxBytes`; what else the PDF is when it has none. `kind`: free work for POST
   * /v1/einvoice/validate, which runs after paid work in the qpdf slots.
   */
  embeddedFile(
    pdf: Buffer,
    names: readonly string[],
    options: { maxBytes: number; accountId: string; kind: TaskKind },
  ): Promise<EmbeddedFile>;
  /** Runs in progress and waiting (for /metrics). */
  stats(): PoolStats;
}

export interface QpdfOptions {
  /** Deadline of one run; past it the process gets SIGKILL. */
  timeoutMs: number;
  /** Runs at once in this process; more wait their turn. */
  concurrency: number;
  /** @defaultValue 'qpdf' (on PATH) */
  path?: string;
}

/**
 * Runs waiting, all accounts and one account: a waiting run holds its request's inputs (up to
 * PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES) in memory, so the line is bounded; the account's share is a quarter of it.
 */
const QPDF_QUEUE_LIMIT = 64;
const QPDF_ACCOUNT_QUEUE_LIMIT = 16;

/** What a finished run left behind. */
interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** `1,2,3,7,6` → `1-3,7,6`: ascending runs as ranges keep a 2000-page selection's argument short. */
export function pageRangeArgument(pages: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < pages.length; ) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j]! + 1) j += 1;
    parts.push(j > i ? `${pages[i]}-${pages[j]}` : String(pages[i]));
    i = j + 1;
  }
  return parts.join(',');
}

/** qpdf's own explanation without its `qpdf: /tmp/…/in0.pdf: ` prefix, which names our temporary file. */
function lastProblem(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.at(-1) ?? 'qpdf could not read it';
  return line.replace(/^(?:qpdf: |WARNING: )?in\d+\.pdf(?: \([^)]*\))?: /, '');
}

/**
 * What one qpdf run may allocate: twice the most an honest input within the size bound was measured to
 * need (rotating a long tagged Chromium report rewrites all its objects: docs/pdf-tools.md "qpdf's ceilings"), while
 * a file built to make qpdf allocate (a 20 KB object stream of ten million numbers: 2.6 GB) stops here.
 */
const QPDF_MEMORY_CEILING_BYTES = 2 * 1024 ** 3;
/** qpdf's words for an allocation past the ceiling; it may report one as a damaged object and carry on, exiting 3. */
const QPDF_OUT_OF_MEMORY = /std::bad_alloc/;

/** The run's ceilings; CPU: qpdf is single-threaded, so the deadline's seconds bound its CPU too, and this holds should the deadline's timer never fire. */
function qpdfCeiling(timeoutMs: number): ChildCeiling {
  return {
    memoryBytes: QPDF_MEMORY_CEILING_BYTES,
    cpuSeconds: Math.ceil(timeoutMs / 1000),
    outOfMemory: QPDF_OUT_OF_MEMORY,
  };
}

/** A run stopped at its ceiling: the PDF asks for more than one run may spend. */
function tooComplex(ceiling: 'memory' | 'cpu' | 'file', limits: ChildCeiling): AppError {
  const what =
    ceiling === 'memory'
      ? `more than ${limits.memoryBytes / 1024 ** 3} GiB of memory`
      : ceiling === 'cpu'
        ? `more than ${limits.cpuSeconds} s of CPU time`
        : 'a larger file than it may write';
  return new AppError(
    'PDF_TOO_COMPLEX',
    `Processing the PDF needed ${what}, the most one PDF tool run may use, and was stopped; nothing was charged. Split the document, or rewrite it with another PDF tool first.`,
  );
}

export function createQpdf(options: QpdfOptions): Qpdf {
  const slots = new FairScheduler({
    name: 'qpdf',
    limits: {
      capacity: options.concurrency,
      queueLimit: QPDF_QUEUE_LIMIT,
      accountSlots: accountSlotsOf(options.concurrency),
      workConserving: false,
      // Free runs (an e-invoice validation's PDF) leave a slot to paid ones.
      freeSlots: accountSlotsOf(options.concurrency),
      accountQueueLimit: QPDF_ACCOUNT_QUEUE_LIMIT,
      accountFreeQueueLimit: QPDF_ACCOUNT_QUEUE_LIMIT,
    },
    words: { task: 'PDF tool run', slot: 'qpdf slot' },
    busy: (reason) =>
      new AppError('SERVICE_UNAVAILABLE', 'The PDF tools are busy; retry shortly. Nothing was charged.', {
        details: { retryAfterSeconds: 2, reason },
      }),
  });
  const program = options.path ?? 'qpdf';
  const ceiling = qpdfCeiling(options.timeoutMs);

  async function run(args: string[], cwd: string, maxBuffer = 64 << 20): Promise<RunResult> {
    const result = await runLimited(program, args, { cwd, timeoutMs: options.timeoutMs, maxBuffer, ceiling });
    switch (result.ended) {
      case 'exit':
        return result;
      case 'ceiling':
        throw tooComplex(result.ceiling, ceiling);
      case 'timeout':
        throw new AppError(
          'PDF_TOOL_TIMEOUT',
          `The PDF took longer than ${options.timeoutMs} ms to process and was stopped; nothing was charged. Try a smaller document.`,
        );
      case 'missing':
        throw new AppError(
          'PDF_TOOL_FAILED',
          result.program === program
            ? `"${program}" was not found on PATH; install Debian's qpdf package.`
            : `"${result.program}" was not found on PATH; install Debian's util-linux package.`,
        );
      case 'signal':
        throw new AppError(
          'PDF_TOOL_FAILED',
          `The PDF could not be processed (qpdf ended by ${result.signal}); nothing was charged.`,
        );
      case 'failed':
        throw new AppError('PDF_TOOL_FAILED', 'The PDF could not be processed; nothing was charged.', {
          cause: result.error,
        });
    }
  }

  /** Writes the inputs as in0.pdf…, runs qpdf in a slot, hands back the directory's files; removes them all. */
  async function withFiles<T>(
    inputs: Buffer[],
    accountId: string,
    work: (dir: string, names: string[]) => Promise<T>,
    kind: TaskKind = 'paid',
  ): Promise<T> {
    // A run waits at most as long as it may run.
    return slots.run(
      { accountId, kind },
      async () => {
        const dir = await mkdtemp(join(tmpdir(), 'pressroom-pdftools-'));
        try {
          const names = inputs.map((_, i) => `in${i}.pdf`);
          await Promise.all(inputs.map((pdf, i) => writeFile(join(dir, names[i]!), pdf)));
          return await work(dir, names);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      },
      { maxWaitMs: options.timeoutMs },
    );
  }

  /** Runs a writing command and returns out.pdf; exit 2 after a clean inspection is our failure, not the customer's. */
  async function produce(
    inputs: Buffer[],
    accountId: string,
    args: (names: string[]) => string[],
    kind: TaskKind = 'paid',
  ): Promise<Buffer> {
    return withFiles(
      inputs,
      accountId,
      async (dir, names) => {
        const result = await run(args(names), dir);
        if (result.exitCode !== 0 && result.exitCode !== 3) {
          throw new AppError(
            'PDF_TOOL_FAILED',
            `qpdf could not write the result (${lastProblem(result.stderr)}); nothing was charged.`,
          );
        }
        return readFile(join(dir, 'out.pdf'));
      },
      kind,
    );
  }

  /**
   * Passwords go to qpdf in files of the run's private directory (`--password-file`, `@arguments`),
   * never on its command line, where any local user would read them in /proc.
   */
  async function secretFile(dir: string, name: string, lines: string[]): Promise<string> {
    await writeFile(join(dir, name), `${lines.join('\n')}\n`, { mode: 0o600 });
    return name;
  }

  /** qpdf JSON v2 objects of an outline over `pages` (object ids): one entry per part, at its first page. */
  function outlineUpdate(
    rootId: string,
    catalog: Record<string, unknown>,
    pages: string[],
    parts: { title: string; pages: number }[],
    firstId: number,
  ): unknown {
    const objects: Record<string, unknown> = {};
    const ids = parts.map((_, i) => firstId + 1 + i);
    objects[`obj:${firstId} 0 R`] = {
      value: { '/Type': '/Outlines', '/First': `${ids[0]} 0 R`, '/Last': `${ids.at(-1)} 0 R`, '/Count': parts.length },
    };
    let page = 0;
    parts.forEach((part, i) => {
      const entry: Record<string, unknown> = {
        '/Title': `u:${part.title}`,
        '/Parent': `${firstId} 0 R`,
        '/Dest': [pages[page], '/XYZ', null, null, null],
      };
      if (i > 0) entry['/Prev'] = `${ids[i - 1]} 0 R`;
      if (i < parts.length - 1) entry['/Next'] = `${ids[i + 1]} 0 R`;
      objects[`obj:${ids[i]} 0 R`] = { value: entry };
      page += part.pages;
    });
    objects[`obj:${rootId}`] = { value: { ...catalog, '/Outlines': `${firstId} 0 R`, '/PageMode': '/UseOutlines' } };
    return {
      qpdf: [
        { jsonversion: 2, pushedinheritedpageresources: false, calledgetallpages: false, maxobjectid: firstId - 1 },
        objects,
      ],
    };
  }

  return {
    mergeFiles({ dir, parts, out, accountId }) {
      return slots.run(
        { accountId, kind: 'paid' },
        async () => {
          // @file: thousands of input names stay off the command line.
          await writeFile(
            join(dir, 'merge.args'),
            ['--empty', '--pages', ...parts.map((p) => p.name), '--', 'merged.pdf'].join('\n'),
          );
          const merged = await run(['@merge.args'], dir);
          if (merged.exitCode !== 0 && merged.exitCode !== 3)
            throw new AppError(
              'PDF_TOOL_FAILED',
              `qpdf could not merge the documents (${lastProblem(merged.stderr)}).`,
            );
          type Described = {
            pages: { object: string }[];
            qpdf: [{ maxobjectid: number }, Record<string, { value?: Record<string, unknown> }>];
          };
          // Only the trailer and the catalog among the objects: a thousand invoices' objects are megabytes of JSON.
          const facts = JSON.parse(
            (await run(['--json=2', '--json-key=pages', '--json-key=qpdf', '--json-object=trailer', 'merged.pdf'], dir))
              .stdout,
          ) as Described;
          const trailer = facts.qpdf[1]['trailer']?.value as { '/Root': string };
          const root = JSON.parse(
            (
              await run(
                [
                  '--json=2',
                  '--json-key=qpdf',
                  `--json-object=${trailer['/Root'].replace(/ R$/, '').replace(' ', ',')}`,
                  'merged.pdf',
                ],
                dir,
              )
            ).stdout,
          ) as Described;
          const catalog = root.qpdf[1][`obj:${trailer['/Root']}`]?.value ?? {};
          const update = outlineUpdate(
            trailer['/Root'],
            catalog,
            facts.pages.map((p) => p.object),
            parts,
            facts.qpdf[0].maxobjectid + 1,
          );
          await writeFile(join(dir, 'outline.json'), JSON.stringify(update));
          const outlined = await run(['merged.pdf', '--update-from-json=outline.json', out], dir);
          if (outlined.exitCode !== 0 && outlined.exitCode !== 3)
            throw new AppError('PDF_TOOL_FAILED', `qpdf could not add the outline (${lastProblem(outlined.stderr)}).`);
          await rm(join(dir, 'merged.pdf'), { force: true });
        },
        { maxWaitMs: options.timeoutMs },
      );
    },

    inspect(pdf, accountId, password) {
      return withFiles([pdf], accountId, async (dir, [name]) => {
        const secret =
          password === undefined ? [] : [`--password-file=${await secretFile(dir, 'password', [password])}`];
        const result = await run(
          [...secret, '--json=2', '--json-key=encrypt', '--json-key=pages', '--json-key=acroform', name!],
          dir,
        );
        if (result.exitCode !== 0 && result.exitCode !== 3) {
          if (/invalid password/i.test(result.stderr)) return { kind: 'encrypted' };
          return { kind: 'unreadable', reason: lastProblem(result.stderr) };
        }
        let facts: {
          encrypt?: { encrypted?: boolean };
          pages?: unknown[];
          acroform?: { fields?: { fieldtype?: string; value?: unknown }[] };
        };
        try {
          facts = JSON.parse(result.stdout) as typeof facts;
        } catch {
          return { kind: 'unreadable', reason: 'qpdf could not describe it' };
        }
        if (facts.encrypt?.encrypted && password === undefined) return { kind: 'encrypted' };
        const signedFields = (facts.acroform?.fields ?? []).filter(
          (f) => f.fieldtype === '/Sig' && f.value != null,
        ).length;
        return {
          kind: 'pdf',
          pages: facts.pages?.length ?? 0,
          encrypted: facts.encrypt?.encrypted === true,
          signedFields,
        };
      });
    },

    merge(pdfs, accountId) {
      // --empty: a new document of the inputs' pages (document-level outline and tags are not carried).
      return produce(pdfs, accountId, (names) => ['--empty', '--pages', ...names, '--', 'out.pdf']);
    },

    selectPages(pdf, pages, accountId) {
      return produce([pdf], accountId, ([name]) => [
        '--empty',
        '--pages',
        name!,
        pageRangeArgument(pages),
        '--',
        'out.pdf',
      ]);
    },

    rotate(pdf, rotations, accountId) {
      // `+angle` adds to the page's own rotation, which qpdf reads through inheritance from the page tree.
      const args = rotations.map(
        (r) => `--rotate=+${r.angle}${r.pages === 'all' ? '' : `:${pageRangeArgument(r.pages)}`}`,
      );
      return produce([pdf], accountId, ([name]) => [name!, 'out.pdf', ...args]);
    },

    async splitPages(pdf, parts, accountId) {
      const results: Buffer[] = [];
      // One run per part, each waiting its turn: a long split does not hold several slots at once.
      for (const pages of parts)
        results.push(
          await produce([pdf], accountId, ([name]) => [
            '--empty',
            '--pages',
            name!,
            pageRangeArgument(pages),
            '--',
            'out.pdf',
          ]),
        );
      return results;
    },

    withoutObjectStreams(pdf, accountId, kind) {
      return produce([pdf], accountId, ([name]) => [name!, 'out.pdf', '--object-streams=disable'], kind);
    },

    flatten(pdf, accountId) {
      // Appearances first (a field whose value has none would be flattened blank), then every
      // annotation and widget into the content; qpdf drops the AcroForm once no field has a widget.
      return produce([pdf], accountId, ([name]) => [
        name!,
        'out.pdf',
        '--generate-appearances',
        '--flatten-annotations=all',
      ]);
    },

    encrypt(pdf, protection, accountId) {
      return withFiles([pdf], accountId, async (dir, [name]) => {
        const { permissions: p } = protection;
        const yn = (allowed: boolean) => (allowed ? 'y' : 'n');
        const args = [
          name!,
          'out.pdf',
          '--encrypt',
          protection.userPassword,
          protection.ownerPassword,
          '256',
          `--print=${p.printing === 'high' ? 'full' : p.printing}`,
          `--extract=${yn(p.copying)}`,
          `--modify-other=${yn(p.modifying)}`,
          `--assemble=${yn(p.modifying)}`,
          `--annotate=${yn(p.annotating)}`,
          `--form=${yn(p.fillingForms)}`,
          // Screen readers may always extract text (PDF 2.0 ignores the bit; kept for older readers).
          '--accessibility=y',
          '--',
        ];
        const result = await run([`@${await secretFile(dir, 'arguments', args)}`], dir);
        if (result.exitCode !== 0 && result.exitCode !== 3)
          throw new AppError('PDF_TOOL_FAILED', `qpdf could not encrypt the PDF (${lastProblem(result.stderr)}).`);
        return readFile(join(dir, 'out.pdf'));
      });
    },

    decrypt(pdf, password, accountId) {
      return withFiles([pdf], accountId, async (dir, [name]) => {
        const result = await run(
          [`--password-file=${await secretFile(dir, 'password', [password])}`, '--decrypt', name!, 'out.pdf'],
          dir,
        );
        if (result.exitCode !== 0 && result.exitCode !== 3) {
          if (/invalid password/i.test(result.stderr)) return undefined;
          throw new AppError(
            'PDF_TOOL_FAILED',
            `qpdf could not remove the encryption (${lastProblem(result.stderr)}); nothing was charged.`,
          );
        }
        return readFile(join(dir, 'out.pdf'));
      });
    },

    embeddedFile(pdf, names, { maxBytes, accountId, kind }) {
      return withFiles(
        [pdf],
        accountId,
        async (dir, [name]): Promise<EmbeddedFile> => {
          const listed = await run(['--json=2', '--json-key=encrypt', '--json-key=attachments', name!], dir);
          if (listed.exitCode !== 0 && listed.exitCode !== 3) {
            return /invalid password/i.test(listed.stderr)
              ? { kind: 'encrypted' }
              : { kind: 'unreadable', reason: lastProblem(listed.stderr) };
          }
          let facts: { encrypt?: { encrypted?: boolean }; attachments?: Record<string, { preferredname?: string }> };
          try {
            facts = JSON.parse(listed.stdout) as typeof facts;
          } catch {
            return { kind: 'unreadable', reason: 'qpdf could not describe it' };
          }
          if (facts.encrypt?.encrypted) return { kind: 'encrypted' };
          const attachments = Object.entries(facts.attachments ?? {});
          const wanted = names.map((n) => n.toLowerCase());
          const rank = ([key, a]: [string, { preferredname?: string }]) =>
            Math.min(
              ...[key, a.preferredname ?? '']
                .map((n) => wanted.indexOf(n.toLowerCase()))
                .map((i) => (i < 0 ? Infinity : i)),
            );
          const found = attachments.filter((a) => rank(a) < Infinity).sort((a, b) => rank(a) - rank(b))[0];
          if (!found) return { kind: 'none', names: attachments.map(([key, a]) => a.preferredname ?? key) };
          const fileName = found[1].preferredname ?? found[0];
          // The file goes to stdout, which is not read past the bound: qpdf is stopped there.
          const shown = await run([`--show-attachment=${found[0]}`, name!], dir, maxBytes).catch((error: unknown) => {
            if ((error as { cause?: { code?: unknown } }).cause?.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER')
              return null;
            throw error;
          });
          if (!shown) return { kind: 'too-large', name: fileName, bytes: maxBytes + 1 };
          if (shown.exitCode !== 0 && shown.exitCode !== 3)
            return { kind: 'unreadable', reason: lastProblem(shown.stderr) };
          return { kind: 'file', name: fileName, text: shown.stdout };
        },
        kind,
      );
    },

    stats: () => slots.stats(),
  };
}
