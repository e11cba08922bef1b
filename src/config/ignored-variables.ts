/**
 * `PRESSROOM_*` variables that are not settings: a former setting still set, or a typo. They are
 * ignored, and never silently: `serve` logs one warning naming them, the admin commands print it on
 * stderr (main.ts).
 */
import { FORMER_SETTINGS } from './former-settings.js';
import { SETTING_NAMES } from './settings.js';

const FORMER = new Map(FORMER_SETTINGS.map((f) => [f.name, f]));
/** Read by `pressroom generate`, a client of a running service (docs/batches.md): not the service's settings, and not ignored. */
export const CLIENT_VARIABLES: ReadonlySet<string> = new Set(['PRESSROOM_URL', 'PRESSROOM_API_KEY']);

/** Every `PRESSROOM_*` variable set in `env` that is not a setting, sorted. */
export function ignoredVariables(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.keys(env)
    .filter(
      (name) =>
        name.startsWith('PRESSROOM_') &&
        !SETTING_NAMES.has(name) &&
        !CLIENT_VARIABLES.has(name) &&
        env[name] !== undefined,
    )
    .sort();
}

/** The one-line warning about `names` (ignoredVariables), saying what each former setting became. */
export function ignoredVariablesWarning(names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  const described = names.map((name) => {
    const former = FORMER.get(name);
    if (!former) return `${name} (not a setting)`;
    if (former.replacedBy) return `${name} (no longer a setting: use ${former.replacedBy})`;
    if (!former.where) return `${name} (no longer a setting: ${former.now})`;
    return `${name} (no longer a setting: now a fixed constant, ${former.now})`;
  });
  return `ignored environment variables: ${described.join('; ')}. See docs/settings.md.`;
}
