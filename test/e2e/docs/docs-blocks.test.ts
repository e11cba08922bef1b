/**
 * Every shell block of README.md, docs/*.md and integrations/n8n/README.md runs as written (issue 50):
 * one test per page, named after it, runs the page's blocks in order in one bash against a fresh
 * service of its own (`node bin/pressroom.js serve` on SQLite, its own data directory and port). A page
 * starts where the README's "First steps" leave a reader — `$API_KEY` and `$TEMPLATE_ID` set by those
 * very blocks — or where the page it continues leaves one. A block that fails fails its page's test
 * with the page, the block's line, the command and its output. Blocks a page marks as not run are
 * listed as skipped tests with the page's reason. How pages mark blocks: test/support/docs/doc-pages.ts;
 * how they run: test/support/docs/doc-shell.ts.
 *
 * One page:  npx vitest run test/e2e/docs/docs-blocks.test.ts -t 'docs/finishing.md'
 * (DOCS_TEST_OUTPUT=1 prints each block's output.)
 */
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { ROOT, startCluster } from '../../support/cluster.js';
import { curlsSavingWithoutFail } from '../../support/docs/curl-saves.js';
import {
  blocksUnderHeading,
  docPagePaths,
  readDocPage,
  type DocBlock,
  type DocPage,
} from '../../support/docs/doc-pages.js';
import { runPageBlocks, type ScheduledBlock } from '../../support/docs/doc-shell.js';

const PAGE_TIMEOUT_MS = 300_000;
const BLOCKS_DEADLINE_MS = 240_000;

const pages = new Map(docPagePaths(ROOT).map((name) => [name, readDocPage(ROOT, name)]));
const readme = pages.get('README.md')!;
const firstSteps = blocksUnderHeading(ROOT, readme, 'First steps').filter((b) => !b.skip);
const runs = (b: DocBlock) => b.kind === 'file' || !b.skip;

/** Commands the harness never runs unmarked: they would start a second service, the suite inside itself, or minutes of load. */
const NEVER_UNMARKED: Array<[RegExp, string]> = [
  [/\bscripts\/(serve|setup)\.sh\b/, 'sets up and starts a service of its own (the docs test has started one)'],
  [/\bscripts\/test\.sh\b|\bvitest\b|\bnpm (run )?test\b/, 'runs the test suite inside the test suite'],
  [/\bnpm run (load|bench)|\bbench\//, 'runs a benchmark or the load test (minutes of CPU)'],
  [/\bnpm (ci|install|pack)\b/, 'installs from the npm registry, or writes into the checkout'],
  [/\bdocker\b/, 'needs Docker'],
];

/** The blocks that run before a page's own: the README's first steps, or all of the page it continues. */
function preludeOf(page: DocPage, seen: string[] = []): DocBlock[] {
  if (page.name === 'README.md') return [];
  if (!page.after) return firstSteps;
  const before = pages.get(page.after);
  if (!before || seen.includes(page.after))
    throw new Error(
      `${page.name} continues ${page.after}, which is not a page the docs test reads (or continues it back)`,
    );
  return [...preludeOf(before, [...seen, page.name]), ...before.blocks.filter(runs)];
}

/** What is wrong with a page without running it: unknown markers, command-looking untagged fences, syntax, curls saving errors. */
function staticProblems(page: DocPage): string[] {
  const problems = page.unknownMarkers.map((m) => `a docs-test marker it does not know, ${m}`);
  for (const block of preludeOf(page).filter((b) => b.kind === 'shell')) {
    const refused = NEVER_UNMARKED.find(([pattern]) => pattern.test(block.instead ?? block.text));
    if (refused)
      problems.push(
        `${block.page} line ${block.line}, which the page starts from, ${refused[1]}: mark it <!-- not run by the docs test: … -->`,
      );
  }
  for (const line of page.untaggedCommands)
    problems.push(
      `line ${line}: a fence without a shell language holds a command; fence it as \`\`\`sh (or \`\`\`text for output)`,
    );
  for (const block of page.blocks.filter((b) => b.kind === 'shell')) {
    const syntax = spawnSync('bash', ['-n'], { input: block.instead ?? block.text, encoding: 'utf8' });
    if (syntax.status !== 0) problems.push(`line ${block.line}: bash -n: ${syntax.stderr.trim()}`);
    for (const [pattern, reason] of NEVER_UNMARKED) {
      if (!block.skip && pattern.test(block.instead ?? block.text))
        problems.push(`line ${block.line}: ${reason}: mark it <!-- not run by the docs test: … -->`);
    }
    for (const curl of curlsSavingWithoutFail(block.text))
      problems.push(
        `line ${block.line}: a curl saves a file without -f, so an error answer would be saved as that file: ${curl}`,
      );
  }
  return problems;
}

for (const page of pages.values()) {
  const shellBlocks = page.blocks.filter((b) => b.kind === 'shell');
  if (shellBlocks.length === 0) continue;

  it(
    page.name,
    async () => {
      expect(staticProblems(page), `${page.name}: blocks the docs test refuses before running`).toEqual([]);
      const blocks: ScheduledBlock[] = [
        ...preludeOf(page).map((block) => ({ block, prelude: true })),
        ...page.blocks.filter(runs).map((block) => ({ block, prelude: false })),
      ];
      if (!blocks.some((b) => !b.prelude && b.block.kind === 'shell')) return;
      const service = await startCluster({
        alls: 1,
        database: 'sqlite',
        storage: 'local',
        logLevel: 'warn',
        env: { PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'false' },
      });
      try {
        const host = `127.0.0.1:${service.alls[0]!.port}`;
        const result = await runPageBlocks({
          root: ROOT,
          blocks,
          host,
          env: service.env,
          deadlineMs: BLOCKS_DEADLINE_MS,
        });
        // DOCS_TEST_OUTPUT=1 prints what each block printed, as a page author checks the page's examples.
        if (process.env.DOCS_TEST_OUTPUT)
          for (const { block, output } of result.outputs) console.log(`── ${block.page}:${block.line}\n${output}`);
        if (result.failure) throw new Error(result.failure);
      } finally {
        await service.close();
      }
    },
    PAGE_TIMEOUT_MS,
  );

  for (const block of shellBlocks.filter((b) => b.skip || b.instead)) {
    it.skip(`${page.name}:${block.line} ${block.skip ? `not run: ${block.skip}` : `runs instead: ${block.instead}`}`, () => {});
  }
}
