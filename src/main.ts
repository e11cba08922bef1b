/** The `pressroom` command line: `serve`, the admin commands and `generate` (a client of the batch API). Wiring only. */
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, PLANS, type LoadOptions } from './config/load-config.js';
import type { AdminCommand } from './admin-cli.js';
import { VERSION } from './version.js';
import { RATE_LIMIT_MAXIMUMS } from './accounts/accounts.js';
import { ACCESS_TOKEN_TTL_SECONDS } from './accounts/credentials.js';
import { MAX_GRANT_CREDITS } from './credits/ledger.js';

/** A parser for a whole-number option within the same bounds as the admin API's. */
const wholeNumber =
  (min: number, max: number) =>
  (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    }
    return Number(value);
  };

// The service and the admin commands are loaded only when a command runs: `--help` and a refused
// option answer without loading the whole service (seconds of CPU on a small machine).
async function runServer(...args: Parameters<typeof import('./server.js').runServer>): Promise<void> {
  return (await import('./server.js')).runServer(...args);
}
async function runAdminCommand(config: ReturnType<typeof loadConfig>, command: AdminCommand): Promise<void> {
  return (await import('./admin-cli.js')).runAdminCommand(config, command);
}
async function runGenerate(...args: Parameters<typeof import('./batch-cli/generate.js').runGenerate>): Promise<number> {
  return (await import('./batch-cli/generate.js')).runGenerate(...args);
}

async function runRulesCommand(
  ...args: Parameters<typeof import('./einvoice/rules/rules-cli.js').runRulesCommand>
): Promise<void> {
  return (await import('./einvoice/rules/rules-cli.js')).runRulesCommand(...args);
}

/**
 * What start-up warns about (former settings still set, variables that are not settings): `serve`
 * logs these, the admin commands print them on stderr.
 */
const startupWarnings: string[] = [];

/** The configuration for `serve` (which creates the data directory on first start). */
function config() {
  return loadOrExit({ createDataDir: true });
}

/**
 * The configuration for an admin command, which says on stderr which installation it works on, and
 * creates a data directory only when asked (`--init`).
 */
function adminConfig(local: { init?: boolean }) {
  const loaded = loadOrExit({ createDataDir: program.opts<{ init?: boolean }>().init === true || local.init === true });
  for (const warning of startupWarnings) process.stderr.write(`pressroom: warning: ${warning}\n`);
  const where =
    loaded.database.dialect === 'sqlite'
      ? `SQLite ${loaded.database.sqlitePath}`
      : `PostgreSQL ${postgresWhere(loaded.database.url ?? '')}`;
  process.stderr.write(`pressroom: data directory ${loaded.dataDir}; database ${where}\n`);
  return loaded;
}

/** host:port/database of a PostgreSQL URL: no user, password or options on the terminal. */
function postgresWhere(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
}

function loadOrExit(options: LoadOptions) {
  try {
    return loadConfig(process.env, { ...options, onWarning: (warning) => startupWarnings.push(warning) });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`pressroom: configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

// Positional: the program's own options come before a command's name, so `generate --version v3` is
// the template's version, not the program's.
const program = new Command('pressroom')
  .version(VERSION)
  .description('Pressroom: HTML templates + JSON data → PDF')
  .option(
    '--init',
    'admin commands: create the data directory (PRESSROOM_DATA_DIR, default ./data) if it does not exist',
  )
  .enablePositionalOptions();

/** An admin command, which also takes `--init` after its name (the program's options are positional). */
function adminCommand(parent: Command, name: string): Command {
  return parent.command(name).addOption(new Option('--init').hideHelp());
}

program
  .command('serve')
  .description('start the service (API and workers by default)')
  .addOption(new Option('--role <role>', 'api, worker, or all').choices(['all', 'api', 'worker']).default('all'))
  // `serve` creates its data directory anyway; `serve --init`, as the admin commands take it, is accepted.
  .addOption(new Option('--init').hideHelp())
  .action(async (opts: { role: 'all' | 'api' | 'worker' }) => runServer(config(), opts.role, startupWarnings));

adminCommand(program, 'migrate')
  .description('apply database migrations and exit')
  .action(async (o) => runAdminCommand(adminConfig(o), { kind: 'migrate' }));

const accounts = program.command('accounts').description('manage accounts');
adminCommand(accounts, 'create')
  .description('create an account; prints {account_id, api_key, plan, credits} (the key is shown once)')
  .option('--email <email>', 'contact e-mail')
  .option('--credits <n>', 'initial credits (a BONUS transaction)', wholeNumber(0, MAX_GRANT_CREDITS), 0)
  .addOption(new Option('--plan <plan>', 'rate-limit plan').choices([...PLANS]).default('free'))
  .option('--per-minute <n>', 'override the plan: requests per minute', wholeNumber(1, RATE_LIMIT_MAXIMUMS.perMinute))
  .option('--per-day <n>', 'override the plan: requests per day', wholeNumber(1, RATE_LIMIT_MAXIMUMS.perDay))
  .action(async (o) =>
    runAdminCommand(adminConfig(o), {
      kind: 'accounts.create',
      email: o.email,
      credits: o.credits,
      plan: o.plan,
      perMinute: o.perMinute,
      perDay: o.perDay,
    }),
  );

adminCommand(program.command('credits').description('manage credits'), 'add')
  .description('add credits; prints {credits} (the new balance)')
  .requiredOption('--account <id>', 'account id')
  .requiredOption('--credits <n>', 'credits to add', wholeNumber(1, MAX_GRANT_CREDITS))
  .addOption(new Option('--type <type>', 'transaction type').choices(['PURCHASE', 'BONUS']).default('PURCHASE'))
  .action(async (o) =>
    runAdminCommand(adminConfig(o), { kind: 'credits.add', accountId: o.account, credits: o.credits, type: o.type }),
  );

const keys = program.command('keys').description('manage API keys');
adminCommand(keys, 'create')
  .description('create an API key; prints {api_key} (shown once)')
  .requiredOption('--account <id>', 'account id')
  .action(async (o) => runAdminCommand(adminConfig(o), { kind: 'keys.create', accountId: o.account }));
adminCommand(keys, 'revoke')
  .description('revoke an API key by its prefix (first 12 characters)')
  .requiredOption('--prefix <prefix>', 'key prefix')
  .action(async (o) => runAdminCommand(adminConfig(o), { kind: 'keys.revoke', prefix: o.prefix }));

const tokens = program.command('tokens').description('manage access tokens');
adminCommand(tokens, 'create')
  .description('issue a JWT access token for the read-only endpoints; prints {access_token, expires_in}')
  .requiredOption('--account <id>', 'account id')
  .option(
    '--ttl <seconds>',
    'lifetime in seconds',
    wholeNumber(ACCESS_TOKEN_TTL_SECONDS.min, ACCESS_TOKEN_TTL_SECONDS.max),
    3600,
  )
  .action(async (o) =>
    runAdminCommand(adminConfig(o), { kind: 'tokens.create', accountId: o.account, ttlSeconds: o.ttl }),
  );
adminCommand(tokens, 'revoke')
  .description('revoke every access token the account was issued up to now; prints {revoked_before}')
  .requiredOption('--account <id>', 'account id')
  .action(async (o) => runAdminCommand(adminConfig(o), { kind: 'tokens.revoke', accountId: o.account }));

// A client of a running service's batch API (docs/batches.md): no configuration, database or browser here.
program
  .command('generate')
  .description(
    'render every row of a CSV, NDJSON or JSON file with a template through the batch API, and download the PDFs',
  )
  .addOption(new Option('--url <url>', 'the Pressroom service, e.g. http://localhost:8080').env('PRESSROOM_URL'))
  .addOption(new Option('--key <key>', 'API key').env('PRESSROOM_API_KEY'))
  .option('--template <id>', 'template id (12 letters and digits, as GET /v1/templates lists them)')
  .option(
    '--version <version>',
    'a published version of the template, by tag or number (default: the draft, as the API)',
  )
  .option('--data <file>', 'the rows: .csv (a header row), .ndjson (an object a line) or .json (an array)')
  .option('--out <dir>', 'write one PDF per row into this folder, as each completes')
  .option('--zip <file>', 'write one zip of all the PDFs')
  .option('--merged <file>', 'write one PDF of all the rows')
  .option(
    '--filename <template>',
    "name each row's PDF from its data, e.g. '{{ invoice_number }}' (only {{ dotted.key }}; default document-<row>)",
  )
  .option('--resume', 'with --out: send only the rows whose PDF is not in the folder yet')
  .option(
    '--max-file-mb <n>',
    'the largest file a download link may answer, in MiB (default 1024); a larger one is not delivered',
  )
  .addHelpText(
    'after',
    '\nExit codes: 0 every row delivered, 1 some not (listed), 2 a refused request, 130 cancelled with Ctrl-C. See docs/batches.md.',
  )
  // A mistyped option is a refused request too (commander's own code would be 1, "some rows failed").
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
  .action(async (o) => {
    process.exitCode = await runGenerate(o);
  });

const rules = program
  .command('einvoice')
  .description('e-invoices')
  .command('rules')
  .description('the official e-invoice rules pack (docs/einvoice.md "The official rules")');
adminCommand(rules, 'install')
  .description(
    'verify the pinned official files (SHA-256), build and compile their rules, and make the pack active; prints the pack',
  )
  .option(
    '--from <dir>',
    'a local copy of the files (<folder>/<path>, as docs/einvoice.md lists them) instead of downloading them',
  )
  .option('--no-cache', 'compile even when ~/.cache/pressroom holds this pack compiled, and cache nothing')
  .action(async (o: { from?: string; cache: boolean; init?: boolean }) =>
    runRulesCommand(adminConfig(o).dataDir, { kind: 'install', from: o.from, cache: o.cache }),
  );
adminCommand(rules, 'status')
  .description('the active pack, with every file hashed again; prints {installed, rule_sets, verified, …}')
  .action(async (o: { init?: boolean }) => runRulesCommand(adminConfig(o).dataDir, { kind: 'status' }));

await program.parseAsync(process.argv);
