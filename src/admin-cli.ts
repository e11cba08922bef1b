/** The admin commands of the CLI: the same operations as the admin API, printed as the same JSON. */
import type { Config, Plan } from './shared/config.js';
import { createServices } from './services.js';
import { AppError } from './shared/errors.js';
import { createLogger } from './shared/log.js';

export type AdminCommand =
  | { kind: 'migrate' }
  | { kind: 'accounts.create'; email?: string; credits: number; plan: Plan; perMinute?: number; perDay?: number }
  | { kind: 'credits.add'; accountId: string; credits: number; type: 'PURCHASE' | 'BONUS' }
  | { kind: 'keys.create'; accountId: string }
  | { kind: 'keys.revoke'; prefix: string }
  | { kind: 'tokens.create'; accountId: string; ttlSeconds: number }
  | { kind: 'tokens.revoke'; accountId: string };

export async function runAdminCommand(config: Config, command: AdminCommand): Promise<void> {
  // Logs go to stderr so stdout stays pure JSON for scripts.
  const services = await createServices(config, { logger: createLogger('warn', process.stderr as never), role: 'api' });
  try {
    const output = await execute(services, command);
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
  } catch (error) {
    if (error instanceof AppError) {
      process.stderr.write(`pressroom: ${error.code}: ${error.message}\n`);
      process.exitCode = 1;
    } else {
      throw error;
    }
  } finally {
    await services.close();
  }
}

async function execute(services: Awaited<ReturnType<typeof createServices>>, command: AdminCommand): Promise<unknown> {
  switch (command.kind) {
    case 'migrate':
      return { migrated: true, database: services.database.dialect };
    case 'accounts.create':
      return services.accounts.create({
        email: command.email ?? null,
        credits: command.credits,
        plan: command.plan,
        rateLimit: { perMinute: command.perMinute ?? null, perDay: command.perDay ?? null },
      });
    case 'credits.add':
      return { credits: await services.ledger.grant(command.accountId, command.credits, command.type) };
    case 'keys.create':
      return { api_key: await services.accounts.createApiKey(command.accountId) };
    case 'keys.revoke':
      await services.accounts.revokeApiKey(command.prefix);
      return { success: true };
    case 'tokens.create':
      return {
        access_token: await services.accounts.issueAccessToken(command.accountId, command.ttlSeconds),
        expires_in: command.ttlSeconds,
      };
    case 'tokens.revoke': {
      const { revokedBefore } = await services.accounts.revokeAccessTokens(command.accountId);
      return { revoked_before: new Date(revokedBefore).toISOString() };
    }
  }
}
