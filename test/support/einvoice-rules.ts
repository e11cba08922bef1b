/**
 * The official e-invoice rules pack for the tests (issue 41), installed the way an operator installs it:
 * `node bin/pressroom.js einvoice rules install --from ../shared/einvoice-rules` (the publishers' files,
 * kept beside the checkout, never in it), or downloading them when that folder is absent. The compiled
 * stylesheets come from the compile cache (~/.cache/pressroom) that `scripts/setup.sh --test` fills, so
 * an install takes a second; without it, the first install compiles (a minute or two).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defaultCacheDir, installRulesPack as installPack } from '../../src/einvoice/rules/pack-install.js';
import { ensureDist, ROOT } from './cluster.js';
import { SECRET_KEY } from './test-app.js';

/** The publishers' files, beside the checkout. */
export const SHARED_RULES_DIR = resolve(ROOT, '..', 'shared', 'einvoice-rules');
/** Whether that copy is here (the official examples the tests judge are in it). */
export const HAS_SHARED_RULES = existsSync(join(SHARED_RULES_DIR, 'SHA256SUMS'));

/** The official example invoices (and KoSIT's test suite) in the shared copy. */
export const EXAMPLES = {
  cii: join(SHARED_RULES_DIR, 'en16931-1.3.16', 'cii', 'examples'),
  ubl: join(SHARED_RULES_DIR, 'en16931-1.3.16', 'ubl', 'examples'),
  xrechnung: join(SHARED_RULES_DIR, 'xrechnung-testsuite-2026-01-31', 'src', 'test', 'business-cases', 'standard'),
};

/** A finished CLI run. */
export interface RulesCliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `pressroom einvoice rules <args>` on `dataDir` (created with --init); resolves when it exits. */
export function rulesCli(dataDir: string, args: string[]): Promise<RulesCliResult> {
  ensureDist();
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['bin/pressroom.js', '--init', 'einvoice', 'rules', ...args],
      // A cold compile cache makes the install compile: minutes on a busy machine.
      {
        cwd: ROOT,
        timeout: 900_000,
        maxBuffer: 16 << 20,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? '',
          PRESSROOM_SECRET_KEY: SECRET_KEY,
          PRESSROOM_DATA_DIR: dataDir,
        },
      },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Installs the pack into `dataDir` (from the shared copy when present); throws with the CLI's words unless it succeeded. */
export async function installRulesPack(dataDir: string): Promise<void> {
  const result = await rulesCli(dataDir, ['install', ...(HAS_SHARED_RULES ? ['--from', SHARED_RULES_DIR] : [])]);
  if (result.code !== 0) throw new Error(`pressroom einvoice rules install failed (${result.code}): ${result.stderr}`);
}

/**
 * Installs the pack with its stylesheets exactly as published (nothing lifted) into `dataDir`: the
 * reference the lifted pack is compared with. Through the library, not the CLI: operators are not offered it.
 */
export async function installPublishedRulesPack(dataDir: string): Promise<void> {
  await installPack({
    dataDir,
    origin: HAS_SHARED_RULES ? { kind: 'directory', dir: SHARED_RULES_DIR } : { kind: 'download' },
    cacheDir: defaultCacheDir(),
    published: true,
  });
}

/** The hook timeout of a test file that installs the pack: a cold compile cache means compiling. */
export const INSTALL_TIMEOUT_MS = 900_000;
