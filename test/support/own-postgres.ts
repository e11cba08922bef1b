/**
 * A PostgreSQL server of a test's own: a fresh cluster (initdb) in a temporary directory on a free
 * loopback port, run as the `postgres` user with the machine's own binaries. A drill that restarts
 * PostgreSQL restarts this one, so the rest of the suite, on the machine's server, runs beside it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface OwnPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, trust authentication. */
  url: string;
  /** Asynchronous: the test's load keeps running in this process during the restart. */
  restart(): Promise<void>;
  running(): boolean;
  start(): void;
  stop(): void;
}

function binDir(): string {
  const version = execFileSync('ls', ['/usr/lib/postgresql']).toString().trim().split('\n').sort().pop();
  return `/usr/lib/postgresql/${version}/bin`;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** initdb + start; `stop()` ends it, `dispose()` removes the directory as well. */
export async function startOwnPostgres(): Promise<OwnPostgres & { dispose(): void }> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'pressroom-pg-'));
  chownSync(
    dir,
    Number(execFileSync('id', ['-u', 'postgres']).toString()),
    Number(execFileSync('id', ['-g', 'postgres']).toString()),
  );
  const data = join(dir, 'data');
  const port = await freePort();
  // initdb refuses to run as root; runuser switches to the server's own user, as the machine's scripts do.
  const asPostgres = (tool: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { stdio: 'pipe' });
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  const stop = () => asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  const running = () => {
    try {
      asPostgres('pg_ctl', ['-D', data, 'status']);
      return true;
    } catch {
      return false;
    }
  };
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: async () => {
      await promisify(execFile)('runuser', [
        '-u',
        'postgres',
        '--',
        join(bin, 'pg_ctl'),
        '-D',
        data,
        '-o',
        options,
        '-l',
        join(dir, 'log'),
        '-m',
        'fast',
        '-w',
        'restart',
      ]);
    },
    running,
    start,
    stop,
    dispose() {
      if (running()) stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
