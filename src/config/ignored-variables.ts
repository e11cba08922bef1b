/**
 * `PRESSROOM_*` variables that are not settings: a typo, or a former setting (former-settings.ts,
 * read-former-settings.ts says what each one set does now). Never silently: `serve` logs a warning
 * naming them, the admin commands print it on stderr (main.ts).
 */
import { FORMER_SETTINGS } from './former-settings.js';
import { isReadFormerSetting } from './read-former-settings.js';
import { SETTING_NAMES } from './settings.js';

const FORMER_NAMES: ReadonlySet<string> = new Set(FORMER_SETTINGS.map((f) => f.name));
/** Read by `pressroom generate`, a client of a running service (docs/batches.md): not the service's settings, and not ignored. */
export const CLIENT_VARIABLES: ReadonlySet<string> = new Set(['PRESSROOM_URL', 'PRESSROOM_API_KEY']);

const notSettings = (env: Readonly<Record<string, string | undefined>>) =>
  Object.keys(env)
    .filter(
      (name) =>
        name.startsWith('PRESSROOM_') &&
        !SETTING_NAMES.has(name) &&
        !CLIENT_VARIABLES.has(name) &&
        env[name] !== undefined,
    )
    .sort();

/** Every `PRESSROOM_*` variable set in `env` whose value the service does not read at all, sorted: typos and former settings that are only reported. */
export function ignoredVariables(env: Readonly<Record<string, string | undefined>>): string[] {
  return notSettings(env).filter((name) => !isReadFormerSetting(name));
}

/** The one-line warning about the variables in `env` that are neither settings nor former settings (typos), if any. */
export function unknownVariablesWarning(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const names = notSettings(env).filter((name) => !FORMER_NAMES.has(name));
  if (names.length === 0) return undefined;
  return `ignored environment variables: ${names.map((name) => `${name} (not a setting)`).join('; ')}. See docs/settings.md.`;
}
