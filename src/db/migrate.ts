import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Dialect } from './database.js';
import { migration0001Foundation } from './migrations/0001-foundation.js';

/** A migration receives the dialect so it can write the few column types that differ. */
export interface VersionedMigration {
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

/** Numbered, append-only. Never edit one that has shipped; add the next. */
const MIGRATIONS: Record<string, VersionedMigration> = {
  '0001-foundation': migration0001Foundation,
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
  const migrator = new Migrator({ db, provider: new InCodeProvider(dialect) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String((error as Error)?.message ?? error)}`, { cause: error });
  }
}
