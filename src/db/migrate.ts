import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Dialect } from './dialect.js';
import { migration0001Foundation } from './migrations/0001-foundation.js';
import { migration0002Documents } from './migrations/0002-documents.js';
import { migration0003Jobs } from './migrations/0003-jobs.js';
import { migration0004S3Integrations } from './migrations/0004-s3-integrations.js';
import { migration0005RequestIds } from './migrations/0005-request-ids.js';
import { migration0006Retention } from './migrations/0006-retention.js';
import { migration0007CreditReservations } from './migrations/0007-credit-reservations.js';
import { migration0009TokenRevocation } from './migrations/0009-token-revocation.js';
import { migration0010FairClaims } from './migrations/0010-fair-claims.js';
import { migration0011TemplateVersions } from './migrations/0011-template-versions.js';
import { migration0012TemplateKind } from './migrations/0012-template-kind.js';
import { migration0013Assets } from './migrations/0013-assets.js';
import { migration0014TemplateStrict } from './migrations/0014-template-strict.js';
import { migration0015TransactionTool } from './migrations/0015-transaction-tool.js';
import { migration0016SigningCertificates } from './migrations/0016-signing-certificates.js';
import { migration0017Batches } from './migrations/0017-batches.js';
import { migration0018EinvoiceVerdict } from './migrations/0018-einvoice-verdict.js';
import { migration0019AssetRevisions } from './migrations/0019-asset-revisions.js';
import { migration0020TransactionJobs } from './migrations/0020-transaction-jobs.js';
import { migration0021ClaimByAccount } from './migrations/0021-claim-by-account.js';
import { migration0022JobAccessibilityChecks } from './migrations/0022-job-accessibility-checks.js';
import { migration0023PdfFormTemplates } from './migrations/0023-pdf-form-templates.js';

/** A migration receives the dialect so it can write the few column types that differ. */
export interface VersionedMigration {
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

/** Numbered, append-only. Never edit one that has shipped; add the next. */
const MIGRATIONS: Record<string, VersionedMigration> = {
  '0001-foundation': migration0001Foundation,
  '0002-documents': migration0002Documents,
  '0003-jobs': migration0003Jobs,
  '0004-s3-integrations': migration0004S3Integrations,
  '0005-request-ids': migration0005RequestIds,
  '0006-retention': migration0006Retention,
  '0007-credit-reservations': migration0007CreditReservations,
  '0009-token-revocation': migration0009TokenRevocation,
  '0010-fair-claims': migration0010FairClaims,
  '0011-template-versions': migration0011TemplateVersions,
  '0012-template-kind': migration0012TemplateKind,
  '0013-assets': migration0013Assets,
  '0014-template-strict': migration0014TemplateStrict,
  '0015-transaction-tool': migration0015TransactionTool,
  '0016-signing-certificates': migration0016SigningCertificates,
  '0017-batches': migration0017Batches,
  '0018-einvoice-verdict': migration0018EinvoiceVerdict,
  '0019-asset-revisions': migration0019AssetRevisions,
  '0020-transaction-jobs': migration0020TransactionJobs,
  '0021-claim-by-account': migration0021ClaimByAccount,
  '0022-job-accessibility-checks': migration0022JobAccessibilityChecks,
  '0023-pdf-form-templates': migration0023PdfFormTemplates,
};

class InCodeProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const [name, migration] of Object.entries(MIGRATIONS)) {
      out[name] = { up: (db) => migration.up(db, this.dialect) };
    }
    return out;
  }
}

/** Applies pending migrations; Kysely's migration lock keeps concurrent starters from racing. */
export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await migrate(db, dialect, (migrator) => migrator.migrateToLatest());
}

/** Applies migrations up to and including `name` only: for a migration's own tests, which need the rows before it. */
export async function migrateTo(db: Kysely<any>, dialect: Dialect, name: string): Promise<void> {
  await migrate(db, dialect, (migrator) => migrator.migrateTo(name));
}

async function migrate(
  db: Kysely<any>,
  dialect: Dialect,
  run: (migrator: Migrator) => Promise<MigrationResultSet>,
): Promise<void> {
  // Kysely looks for its own tables in every schema unless told which one: with several schemas in
  // one PostgreSQL database (tests, shared servers) it would find another schema's lock table and then
  // fail to read its own. Pin it to the connection's current schema.
  const migrationTableSchema =
    dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({ db, provider: new InCodeProvider(dialect), migrationTableSchema });
  let { error, results } = await run(migrator);
  // Kysely's introspection reads every schema of the database; one dropped by someone else while it
  // reads fails it with "schema … does not exist" (3F000; seen with tests, which drop theirs in
  // parallel). Nothing was migrated then: read again.
  for (let attempt = 1; attempt < 5 && isSchemaGone(error); attempt++) {
    ({ error, results } = await run(migrator));
  }
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(
      `database migration ${failed?.migrationName ?? ''} failed: ${String((error as Error)?.message ?? error)}`,
      { cause: error },
    );
  }
}

function isSchemaGone(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === '3F000';
}
