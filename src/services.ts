/**
 * The composition root: opens every long-lived resource once (database, Redis, browser, storage) and
 * returns the services with one `close()` that releases them in reverse order.
 */
import { sql } from 'kysely';
import { Redis } from 'ioredis';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { createAccountService, type AccountService } from './accounts/accounts.js';
import { createAccessTokenSigner } from './accounts/credentials.js';
import { createCreditLedger, type CreditLedger } from './credits/ledger.js';
import { createTemplateService, type TemplateService } from './templates/templates.js';
import { createRateLimiter, type RateLimiter } from './rate-limits/rate-limiter.js';
import type { Logger } from './shared/log.js';

export type Role = 'all' | 'api' | 'worker';

export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly database: DatabaseHandle;
  readonly accounts: AccountService;
  readonly ledger: CreditLedger;
  readonly templates: TemplateService;
  readonly rateLimiter: RateLimiter;
  /** Each dependency's state, for /readyz. */
  readiness(): Promise<Record<string, 'ok' | string>>;
  close(): Promise<void>;
}

export interface ServiceOptions {
  logger: Logger;
  role?: Role;
  /** Tests pass a PostgreSQL schema of their own. */
  pgSchema?: string;
}

export async function createServices(config: Config, options: ServiceOptions): Promise<Services> {
  const { logger } = options;
  const releasers: (() => Promise<void> | void)[] = [];
  const close = async () => {
    for (const release of releasers.reverse()) {
      try {
        await release();
      } catch (error) {
        logger.warn({ err: error }, 'error while closing a resource');
      }
    }
    releasers.length = 0;
  };

  try {
    const database = await openDatabase({
      dialect: config.database.dialect,
      url: config.database.url,
      sqlitePath: config.database.sqlitePath,
      poolSize: config.database.poolSize,
      pgSchema: options.pgSchema,
    });
    releasers.push(() => database.close());

    let redis: Redis | undefined;
    if (config.redisUrl) {
      redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
      redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
      const client = redis;
      releasers.push(() => void client.disconnect());
    }

    const ledger = createCreditLedger(database.db);
    const accounts = createAccountService(database.db, ledger, createAccessTokenSigner(config.secretKey));
    const templates = createTemplateService(database.db);
    const rateLimiter = createRateLimiter(config.plans, redis);

    return {
      config,
      logger,
      database,
      accounts,
      ledger,
      templates,
      rateLimiter,
      async readiness() {
        const checks: Record<string, string> = {};
        try {
          await sql`select 1`.execute(database.db);
          checks.database = 'ok';
        } catch (error) {
          checks.database = `unavailable: ${(error as Error).message}`;
        }
        if (redis) checks.redis = redis.status === 'ready' ? 'ok' : `degraded: ${redis.status} (rate limits fall back to memory)`;
        return checks;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
