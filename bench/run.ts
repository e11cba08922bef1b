/**
 * `npm run bench`: Pressroom through its full HTTP API (auth, credits, template, render) side by side,
 * in the same run, with the peer harness (`../shared/peers`: floor, jsreport, naive).
 *
 * 1. copies the read-only harness to bench/out/peers and installs its pinned npm packages there;
 * 2. starts the built service (`dist/`) on a fresh data dir and loopback port, with an account that has
 *    no rate limit and enough credits, and the two fixture templates;
 * 3. runs `node bench.mjs --engines floor,service,jsreport,naive …` with SERVICE_PID so the memory
 *    columns cover Pressroom and its Chromium;
 * 4. prints the harness's tables (they also land in bench/out/peers/out/results-*.json).
 *
 * Options are passed through to bench.mjs (defaults: --n 100 --n-report 5 --concurrency 1,2,4); with
 * `--tagged off` the service prints the same fixtures from templates with page.tagged false.
 * `--engines` defaults to floor,service,jsreport,naive: the harness runs engines in the order given,
 * and an engine run right after `naive` (hundreds of browser launches and profile directories) is
 * measured slow — the floor did 31.6 invoices/s at concurrency 2 first in a run and 27.1 right after
 * naive — so the two engines compared by the goal run first, side by side. `--n` defaults to 100
 * rather than the harness's 40: a 40-invoice batch lasts ~1.5 s at concurrency 2, and two such
 * batches of the same engine differed by up to 15 % on this machine.
 * `BENCH_NODE_ARGS` adds Node flags to the service process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 * `--rounds N` runs the comparison N times, the engines' order reversed every other round, and ends with
 * each engine's docs/s ÷ the same round's floor as a median and range (rounds.ts says why).
 * `--service-tagged off|on` chooses the service's templates apart from the floor's `--tagged` (issue 17's
 * untagged-invoice goal is against the tagged floor).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PEERS } from './peer-chromium.js';
import {
  createBenchAccount,
  ensureSystemEngine,
  log,
  preparePeers,
  SHARED_PEERS,
  startBenchService,
} from './bench-service.js';
import { engineOrder, resultFile, roundsTable } from './rounds.js';

/**
 * Runs the peers' bench.mjs and resolves with its exit status. Not spawnSync: a blocked event loop
 * keeps this process's pooled keep-alive sockets past the service's keep-alive timeout (72 s), so
 * the first request after a long harness run went out on a socket the service had already closed
 * ("fetch failed: other side closed").
 */
function runHarness(args: string[], env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, ['bench.mjs', ...args], {
    cwd: PEERS,
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return new Promise((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolvePromise(code ?? 1));
  });
}

/** Removes `--name value` from `args` and returns the value. */
function takeOption(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  return args.splice(at, 2)[1];
}

/**
 * `npm run bench -- --suite issue17`: in one run, side by side (issue 17, README "Performance"):
 * 1. the 330-page report (data ×10) on the floor, tagged and untagged, c=1, before the service starts;
 * 2. the invoice and the 33-page report through the API (tagged templates) with floor and wkhtmltopdf;
 * 3. the same untagged: templates with page.tagged false against the floor with `--tagged off`;
 * 4. the 330-page report through create-async, tagged and untagged, c=1, with peak RSS.
 * Defaults: --concurrency 2 --n 100 --n-report 5 --n-long 3 --long-templates fixture,split; other options go to both
 * bench.mjs passes. `--n-long 0` leaves out steps 1 and 4 (the short documents alone, ~6 minutes).
 * `--rounds N` repeats steps 2 and 3 N times and ends with each ratio's median and range over the rounds.
 */
async function issue17Suite(args: string[]): Promise<void> {
  const { measureFloor, measureService, longTable, longTemplatesOption, LONG_SERVICE_ENV } = await import(
    './costs/long-report.js'
  );
  const nLong = Number(takeOption(args, '--n-long') ?? 3);
  const rounds = roundsOption(args);
  const longTemplates = longTemplatesOption(args);
  if (!args.includes('--concurrency')) args.unshift('--concurrency', '2');
  if (!args.includes('--n-report')) args.unshift('--n-report', '5');
  if (!args.includes('--n')) args.unshift('--n', '100');
  preparePeers();
  // The issue's goals compare against wkhtmltopdf: the suite does not run without it.
  ensureSystemEngine('wkhtmltopdf');
  if (nLong > 0) log(`330-page report on the floor (n=${nLong})`);
  const longRows = nLong > 0 ? await measureFloor(nLong, longTemplates) : [];
  // The long-report settings (long-report.ts: the service's defaults) are the ones the short documents run with too.
  const service = await startBenchService(LONG_SERVICE_ENV);
  try {
    const ids = await createBenchAccount(service.baseUrl);
    const harness = async (extra: string[], invoiceId: string, reportId: string) => {
      const status = await runHarness([...extra, ...args], {
        BASE_URL: service.baseUrl,
        API_KEY: ids.apiKey,
        TEMPLATE_ID: invoiceId,
        TEMPLATE_ID_REPORT: reportId,
        SERVICE_PID: String(service.child.pid),
        SERVICE_VERSION: 'pressroom',
      });
      if (status !== 0) process.exitCode = status;
    };
    // With --rounds N each pass runs N times, the engines' order reversed every other round (rounds.ts).
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const tagged: string[] = [];
    const untagged: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const suffix = rounds > 1 ? `-round${round + 1}-of-${rounds}-${stamp}` : '';
      log(`tagged: floor, Pressroom, wkhtmltopdf${rounds > 1 ? ` (round ${round + 1} of ${rounds})` : ''}`);
      await harness(
        ['--engines', engineOrder('floor,service,wkhtmltopdf', round), '--label', `issue17-tagged${suffix}`],
        ids.invoiceId,
        ids.reportId,
      );
      tagged.push(`issue17-tagged${suffix}`);
      log('untagged: floor --tagged off, Pressroom with page.tagged false');
      // wkhtmltopdf prints the same either way; the untagged goals are read against the tagged pass's.
      await harness(
        ['--engines', engineOrder('floor,service', round), '--tagged', 'off', '--label', `issue17-untagged${suffix}`],
        ids.invoiceUntaggedId,
        ids.reportUntaggedId,
      );
      untagged.push(`issue17-untagged${suffix}`);
    }
    if (rounds > 1) {
      const files = (labels: string[]) => labels.map((label) => resultFile(join(PEERS, 'out'), label));
      process.stdout.write(`\nTagged, against the floor:\n${roundsTable(files(tagged))}\n`);
      process.stdout.write(`\nTagged, against wkhtmltopdf:\n${roundsTable(files(tagged), 'wkhtmltopdf')}\n`);
      process.stdout.write(`\nUntagged, against the untagged floor:\n${roundsTable(files(untagged))}\n`);
      process.stdout.write(
        `\nUntagged, against the same round's tagged floor (the invoice goal):\n${roundsTable(files(untagged), 'floor', files(tagged))}\n`,
      );
      process.stdout.write(
        `\nUntagged, against the same round's wkhtmltopdf (the report goal):\n${roundsTable(files(untagged), 'wkhtmltopdf', files(tagged))}\n`,
      );
    }
    if (nLong > 0) {
      log(`330-page report through create-async (n=${nLong})`);
      longRows.push(...(await measureService(service.baseUrl, ids.apiKey, nLong, longTemplates, service.child.pid!)));
    }
  } finally {
    await service.stop();
  }
  if (longRows.length > 0) process.stdout.write(`\n${longTable(longRows)}\n`);
}

/** `--rounds N` (default 1), taken out of `args`. */
function roundsOption(args: string[]): number {
  const rounds = Number(takeOption(args, '--rounds') ?? 1);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds takes a whole number ≥ 1');
  return rounds;
}

/** An option value that turns a thing off (`off|false|0|no`), as bench.mjs reads `--tagged`. */
const isOff = (value: string) => /^(off|false|0|no)$/i.test(value);

/** Whether the harness arguments ask for untagged PDFs (`--tagged off`). */
function harnessTaggedOff(args: string[]): boolean {
  const at = args.indexOf('--tagged');
  return at >= 0 && isOff(args[at + 1] ?? '');
}

async function main(): Promise<void> {
  const passThrough = process.argv.slice(2);
  const args = [...passThrough];
  const suite = takeOption(args, '--suite');
  if (suite === 'issue17') return issue17Suite(args);
  // Issue 40's batch of invoices from a CSV: its own script, which parses the remaining options itself.
  if (suite === 'batch') return void (await import('./batch-bench.js'));
  // The official e-invoice rules' check of one invoice (issue 41): bench/costs/einvoice-rules.ts.
  if (suite === 'einvoice-rules') return (await import('./costs/einvoice-rules.js')).main(args);
  // The invoice with pdf_ua against the same invoice tagged (issue 53): finishing-cost.ts reads its own options.
  if (suite === 'pdf-ua') {
    process.argv = [...process.argv.slice(0, 2), '--pdf-ua', ...args];
    return void (await import('./costs/finishing-cost.js'));
  }
  // Filling a form template against the HTML invoice, and a 200-page form's memory (issue 54): bench/costs/pdf-forms-cost.ts.
  if (suite === 'pdf-forms') {
    process.argv = [...process.argv.slice(0, 2), ...args];
    return void (await import('./costs/pdf-forms-cost.js'));
  }
  if (suite !== undefined)
    throw new Error(`unknown --suite ${suite}; the ones there are: issue17, batch, einvoice-rules, pdf-ua, pdf-forms`);
  const rounds = roundsOption(args);
  if (!args.includes('--engines')) args.unshift('--engines', 'floor,service,jsreport,naive');
  if (!args.includes('--n')) args.unshift('--n', '100');
  preparePeers();
  log('starting Pressroom (embedded default: SQLite, local files)');
  const service = await startBenchService();
  try {
    const ids = await createBenchAccount(service.baseUrl);
    // `--tagged off` makes the harness's Chromium engines print untagged: Pressroom then gets the
    // templates with page.tagged false, so both sides of the comparison print the same kind of PDF.
    // `--service-tagged off` gives the service the untagged templates while the floor prints as --tagged
    // says: issue 17's goal for untagged invoices is a ratio to the *tagged* floor, measured in one round.
    const serviceTagged = takeOption(args, '--service-tagged');
    const untagged = serviceTagged === undefined ? harnessTaggedOff(args) : isOff(serviceTagged);
    log(
      `service at ${service.baseUrl} (pid ${service.child.pid}); running the peer harness${untagged ? ' (untagged templates)' : ''}`,
    );
    const env = {
      BASE_URL: service.baseUrl,
      API_KEY: ids.apiKey,
      TEMPLATE_ID: untagged ? ids.invoiceUntaggedId : ids.invoiceId,
      TEMPLATE_ID_REPORT: untagged ? ids.reportUntaggedId : ids.reportId,
      SERVICE_PID: String(service.child.pid),
      SERVICE_VERSION: 'pressroom',
    };
    if (rounds === 1) {
      const status = await runHarness(args, env);
      if (status !== 0) process.exitCode = status;
      return;
    }
    // --rounds N (rounds.ts): the engines' order reversed every other round, ratios within each round.
    const engines = takeOption(args, '--engines')!;
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const labels: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const label = `round${round + 1}-of-${rounds}-${stamp}`;
      log(`round ${round + 1} of ${rounds}: ${engineOrder(engines, round)}`);
      const status = await runHarness([...args, '--engines', engineOrder(engines, round), '--label', label], env);
      if (status !== 0) process.exitCode = status;
      labels.push(label);
    }
    process.stdout.write(`\n${roundsTable(labels.map((label) => resultFile(join(PEERS, 'out'), label)))}\n`);
  } finally {
    await service.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    process.stderr.write(`${(error as Error).stack ?? error}\n`);
    process.exit(1);
  });
}

export { createBenchAccount, preparePeers, SHARED_PEERS, startBenchService };
