/** The `pressroom` command line: `serve` and the admin commands. Wiring only. */
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, PLANS, type LoadOptions } from './config/load-config.js';
import { ignoredVariables, ignoredVariablesWarning } from './config/ignored-variables.js';
import type { AdminCommand } from './admin-cli.js';
import { VERSION } from './version.js';
import { RATE_LIMIT_MAXIMUMS } from './accounts/accounts.js';
import { ACCESS_TOKEN_TTL_SECONDS } from './accounts/credentials.js';
import { MAX_GRANT_CREDITS } from './credits/ledger.js';

/** A parser for a whole-number option within the same bounds as the admin API's. */
const wholeNumber = (min: number, max: number) => (value: string): number => {
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

async function runRulesCommand(...args: Parameters<typeof import('./einvoice/rules/rules-cli.js').runRulesCommand>): Promise<void> {
  return (await import('./einvoice/rules/rules-cli.js')).runRulesCommand(...args);
}

/** `PRESSROOM_*` variables that are not settings: `serve` logs this, the admin commands print it on stderr. */
const ignoredWarning = ignoredVariablesWarning(ignoredVariables(process.env));

/** The configuration for `serve` (which creates the data directory on first start). */
function config() {
  return loadOrExit({ createDataDir: true });
}

/**
 * The configuration for an admin command, which says on stderr which installation it works on, and
 * creates a data directory only when asked (`--init`).
 */
function adminConfig() {
  if (ignoredWarning) process.stderr.write(`pressroom: warning: ${ignoredWarning}\n`);
  const loaded = loadOrExit({ createDataDir: program.opts<{ init?: boolean }>().init === true });
  const where = loaded.database.dialect === 'sqlite' ? `SQLite ${loaded.database.sqlitePath}` : `PostgreSQL ${postgresWhere(loaded.database.url ?? '')}`;
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
    return loadConfig(process.env, options);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`pressroom: configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

const program = new Command('pressroom')
  .version(VERSION)
  .description('Pressroom: HTML templates + JSON data → PDF')
  .option('--init', 'admin commands: create the data directory (PRESSROOM_DATA_DIR, default ./data) if it does not exist');

program
  .command('serve')
  .description('start the service (API and workers by default)')
  .addOption(new Option('--role <role>', 'api, worker, or all').choices(['all', 'api', 'worker']).default('all'))
  .action(async (opts: { role: 'all' | 'api' | 'worker' }) => runServer(config(), opts.role, ignoredWarning ? [ignoredWarning] : []));

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => runAdminCommand(adminConfig(), { kind: 'migrate' }));

const accounts = program.command('accounts').description('manage accounts');
accounts
  .command('create')
  .description('create an account; prints {account_id, api_key, plan, credits} (the key is shown once)')
  .option('--email <email>', 'contact e-mail')
  .option('--credits <n>', 'initial credits (a BONUS transaction)', wholeNumber(0, MAX_GRANT_CREDITS), 0)
  .addOption(new Option('--plan <plan>', 'rate-limit plan').choices([...PLANS]).default('free'))
  .option('--per-minute <n>', 'override the plan: requests per minute', wholeNumber(1, RATE_LIMIT_MAXIMUMS.perMinute))
  .option('--per-day <n>', 'override the plan: requests per day', wholeNumber(1, RATE_LIMIT_MAXIMUMS.perDay))
  .action(async (o) => runAdminCommand(adminConfig(), { kind: 'accounts.create', email: o.email, credits: o.credits, plan: o.plan, perMinute: o.perMinute, perDay: o.perDay }));

program
  .command('credits')
  .description('manage credits')
  .command('add')
  .description('add credits; prints {credits} (the new balance)')
  .requiredOption('--account <id>', 'account id')
  .requiredOption('--credits <n>', 'credits to add', wholeNumber(1, MAX_GRANT_CREDITS))
  .addOption(new Option('--type <type>', 'transaction type').choices(['PURCHASE', 'BONUS']).default('PURCHASE'))
  .action(async (o) => runAdminCommand(adminConfig(), { kind: 'credits.add', accountId: o.account, credits: o.credits, type: o.type }));

const keys = program.command('keys').description('manage API keys');
keys
  .command('create')
  .description('create an API key; prints {api_key} (shown once)')
  .requiredOption('--account <id>', 'account id')
  .action(async (o) => runAdminCommand(adminConfig(), { kind: 'keys.create', accountId: o.account }));
keys
  .command('revoke')
  .description('revoke an API key by its prefix (first 12 characters)')
  .requiredOption('--prefix <prefix>', 'key prefix')
  .action(async (o) => runAdminCommand(adminConfig(), { kind: 'keys.revoke', prefix: o.prefix }));

const tokens = program.command('tokens').description('manage access tokens');
tokens
  .command('create')
  .description('issue a JWT access token for the read-only endpoints; prints {access_token, expires_in}')
  .requiredOption('--account <id>', 'account id')
  .option('--ttl <seconds>', 'lifetime in seconds', wholeNumber(ACCESS_TOKEN_TTL_SECONDS.min, ACCESS_TOKEN_TTL_SECONDS.max), 3600)
  .action(async (o) => runAdminCommand(adminConfig(), { kind: 'tokens.create', accountId: o.account, ttlSeconds: o.ttl }));
tokens
  .command('revoke')
  .description("revoke every access token the account was issued up to now; prints {revoked_before}")
  .requiredOption('--account <id>', 'account id')
  .action(async (o) => runAdminCommand(adminConfig(), { kind: 'tokens.revoke', accountId: o.account }));

const rules = program.command('einvoice').description('e-invoices').command('rules').description('the official e-invoice rules pack (docs/einvoice.md "The official rules")');
rules
  .command('install')
  .description('verify the pinned official files (SHA-256), build and compile their rules, and make the pack active; prints the pack')
  .option('--from <dir>', 'a local copy of the files (<folder>/<path>, as docs/einvoice.md lists them) instead of downloading them')
  .option('--no-cache', 'compile even when ~/.cache/pressroom holds this pack compiled, and cache nothing')
  .action(async (o: { from?: string; cache: boolean }) => runRulesCommand(adminConfig().dataDir, { kind: 'install', from: o.from, cache: o.cache }));
rules
  .command('status')
  .description('the active pack, with every file hashed again; prints {installed, rule_sets, verified, …}')
  .action(async () => runRulesCommand(adminConfig().dataDir, { kind: 'status' }));

await program.parseAsync(process.argv);
