/**
 * Real databases for tests: every data-layer test, and every API test of what the store does, runs once
 * on SQLite and once on PostgreSQL (DIALECTS); tests of the document alone, on SQLite (DOCUMENT_DIALECTS).
 * Each test context gets a fresh database: a temporary SQLite file, or a PostgreSQL schema of its own
 * in the `test` database (dropped afterwards).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { randomId } from '../../src/shared/ids.js';
import { TEST_PG_URL } from './global-setup.js';

export const DIALECTS = ['sqlite', 'postgres'] as const;
export type TestDialect = (typeof DIALECTS)[number];

/**
 * For files whose assertions are about the document (its text, pages, pixels, tags, bounds of the
 * input), not about the store: SQLite alone. What the store does (charges and refunds, idempotency,
 * jobs and leases, quotas, versions, tokens, integer bounds) is tested on both, in the files that
 * use DIALECTS.
 */
export const DOCUMENT_DIALECTS: readonly TestDialect[] = ['sqlite'];

export interface TestDatabase {
  dialect: TestDialect;
  /** Environment for loadConfig(). */
  env: Record<string, string>;
  /** PostgreSQL schema (pass to createServices / openDatabase). */
  pgSchema?: string;
  dataDir: string;
  dispose(): Promise<void>;
}

/** `pgUrl`: another PostgreSQL server than the machine's (a drill's own, test/support/own-postgres.ts). */
export async function createTestDatabase(dialect: TestDialect, pgUrl = TEST_PG_URL): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pressroom-test-'));
  if (dialect === 'sqlite') {
    return {
      dialect,
      env: { PRESSROOM_DATA_DIR: dataDir },
      dataDir,
      async dispose() {
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const schema = `t_${Date.now()}_${randomId(8).toLowerCase()}`;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query(`create schema "${schema}"`);
  await client.end();
  return {
    dialect,
    env: { PRESSROOM_DATA_DIR: dataDir, PRESSROOM_DATABASE_URL: pgUrl },
    pgSchema: schema,
    dataDir,
    async dispose() {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`drop schema if exists "${schema}" cascade`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
