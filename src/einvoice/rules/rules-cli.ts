/**
 * `pressroom einvoice rules install [--from DIR] [--no-cache]` and `pressroom einvoice rules status`:
 * JSON on stdout (the pack installed, or the status), progress and refusals on stderr; exit code 1 when
 * the install was refused (nothing was changed) or the active pack is damaged.
 */
import { resolve } from 'node:path';
import { defaultCacheDir, installRulesPack, rulesPackStatus } from './pack-install.js';
import { RulesPackError } from './pack-sources.js';

export type RulesCommand = { kind: 'install'; from?: string; cache: boolean } | { kind: 'status' };

export async function runRulesCommand(dataDir: string, command: RulesCommand): Promise<void> {
  const log = (line: string) => process.stderr.write(`pressroom: ${line}\n`);
  try {
    if (command.kind === 'status') {
      const status = await rulesPackStatus(dataDir);
      process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
      if (status.damaged || (status.verified && status.verified !== 'ok')) process.exitCode = 1;
      return;
    }
    const started = performance.now();
    const pack = await installRulesPack({
      dataDir,
      origin: command.from ? { kind: 'directory', dir: resolve(command.from) } : { kind: 'download' },
      cacheDir: command.cache ? defaultCacheDir() : null,
      log,
    });
    log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    process.stdout.write(
      `${JSON.stringify({ installed: true, id: pack.id, installed_at: pack.installed_at, rule_sets: pack.rule_sets, compiler: pack.compiler }, null, 2)}\n`,
    );
  } catch (error) {
    if (!(error instanceof RulesPackError)) throw error;
    process.stderr.write(`pressroom: EINVOICE_RULES_REFUSED: ${error.message}\n`);
    process.exitCode = 1;
  }
}
