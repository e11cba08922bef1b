/**
 * Runs once before the suite: makes sure the real PostgreSQL (127.0.0.1:5432, database `test`) and Redis
 * (127.0.0.1:6379) the tests use are up, starting them the way the machine's own scripts do if not.
 */
import { execSync } from 'node:child_process';
import { createConnection } from 'node:net';
import pg from 'pg';

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitFor(port: number, what: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    if (await portOpen(port)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${what} did not come up on 127.0.0.1:${port}`);
}

export default async function globalSetup(): Promise<void> {
  if (!(await portOpen(5432))) {
    execSync('pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start', {
      stdio: 'inherit',
      shell: '/bin/bash',
    });
  }
  await waitFor(5432, 'PostgreSQL');
  if (!(await portOpen(6379))) {
    execSync('redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no', {
      stdio: 'inherit',
    });
  }
  await waitFor(6379, 'Redis');
  // Drop schemas left behind by interrupted earlier runs (older than an hour).
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(
      "select nspname from pg_namespace where nspname like 't\\_%'",
    );
    const cutoff = Date.now() - 3600_000;
    for (const { nspname } of rows) {
      const created = Number(nspname.split('_')[1]);
      if (Number.isFinite(created) && created < cutoff)
        await client.query(`drop schema if exists "${nspname}" cascade`);
    }
  } finally {
    await client.end();
  }
}

export const TEST_PG_URL = process.env.PRESSROOM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
