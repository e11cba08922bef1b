/**
 * The embedded default's data directory, as an operator meets it from the CLI: an admin command run
 * where there is no data directory refuses to create a second installation unless asked (`--init`),
 * every admin command says which installation it works on, and what is created is its owner's only
 * (directory 0700, database, its WAL and the master key 0600).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist, ROOT } from '../../support/cluster.js';
import { openDatabase } from '../../../src/db/database.js';

beforeAll(() => ensureDist());
const scratch = mkdtempSync(join(tmpdir(), 'pressroom-data-dir-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function cli(dataDir: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/pressroom.js', ...args],
      {
        cwd: ROOT,
        timeout: 180_000,
        // No PRESSROOM_SECRET_KEY and no database URL: the embedded default, all of it in the data directory.
        env: { PATH: process.env.PATH, HOME: process.env.HOME, PRESSROOM_DATA_DIR: dataDir },
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('the CLI and the data directory', () => {
  const dataDir = join(scratch, 'data');

  it('refuses to create a data directory unless asked, and names the one it looked for', async () => {
    const run = await cli(dataDir, ['accounts', 'create', '--credits', '5']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no data directory at ${dataDir}`);
    expect(run.stderr).toContain('PRESSROOM_DATA_DIR');
    expect(run.stderr).toContain('--init');
    expect(run.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  }, 180_000);

  it('creates it with --init for its owner only, and says which installation every command works on', async () => {
    const created = await cli(dataDir, ['--init', 'accounts', 'create', '--credits', '5']);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ credits: 5 });
    expect(created.stderr).toContain(`data directory ${dataDir}; database SQLite ${join(dataDir, 'pressroom.db')}`);
    expect(mode(dataDir)).toBe('700');
    expect(mode(join(dataDir, 'pressroom.db'))).toBe('600');
    expect(mode(join(dataDir, 'secret.key'))).toBe('600');

    // The next command works on the same installation without --init.
    const again = await cli(dataDir, ['accounts', 'create']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`data directory ${dataDir}`);

    // While the database is open its write-ahead log exists, with the database's mode.
    const handle = await openDatabase({ dialect: 'sqlite', sqlitePath: join(dataDir, 'pressroom.db') });
    try {
      const accounts = await handle.db.selectFrom('accounts').select('id').execute();
      expect(accounts).toHaveLength(2);
      await handle.db.updateTable('accounts').set({ email: 'ops@example.com' }).execute();
      expect(mode(join(dataDir, 'pressroom.db-wal'))).toBe('600');
      expect(mode(join(dataDir, 'pressroom.db-shm'))).toBe('600');
    } finally {
      await handle.close();
    }
  }, 180_000);
});
