/**
 * docs/settings.md, made from the declarations (settings.ts, former-settings.ts): `npm run
 * settings:docs` writes it, and settings-reference.test.ts fails when the file is not what this makes.
 */
import { FORMER_SETTINGS, type FormerSetting } from './former-settings.js';
import { GROUPS, SETTINGS, type Group, type Setting } from './settings.js';

export const SETTINGS_REFERENCE_PATH = 'docs/settings.md';
export const SETTINGS_REFERENCE_COMMAND = 'npm run settings:docs';

/** `|` would end a table cell. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

function defaultOf(setting: Setting): string {
  if (setting.defaultDoc !== undefined) return setting.defaultDoc;
  return setting.kind.show(setting.default);
}

function valuesOf(setting: Setting): string {
  const { kind } = setting;
  if (!kind.range) return kind.type;
  const max = kind.unit === 'bytes' ? kind.show(kind.range.max) : String(kind.range.max);
  const what = kind.unit === undefined || kind.unit === 'count' || kind.unit === 'requests' ? kind.type : kind.unit;
  return `${what}, ${kind.range.min} to ${max}`;
}

/** What start-up does with a former setting still set (read-former-settings.ts). */
function whenSet(former: FormerSetting): string {
  if (former.carry) return `read as \`${former.replacedBy}\`: ${former.now}`;
  if (former.keep) return 'a lower value is kept as the bound; a higher one is ignored';
  return former.notBound ? `ignored: ${former.notBound}` : 'ignored';
}

export function settingsReference(): string {
  const lines = [
    '# Settings',
    '',
    `<!-- Made by \`${SETTINGS_REFERENCE_COMMAND}\` from src/config/settings.ts and src/config/former-settings.ts: edit those, not this file. -->`,
    '',
    'Pressroom is configured by environment variables, read once at start (src/config/). A value out of its',
    'bounds stops start-up with a message naming the variable; an empty variable counts as unset. Any other',
    '`PRESSROOM_*` variable is ignored with a warning: `serve` logs it, the admin commands print it on stderr.',
    '',
    'These are the values an operator is meant to change. Everything else is fixed in code, as a named constant',
    'beside what it bounds with its reason there; the variables that used to set some of them are listed at the end.',
    '',
  ];
  for (const [group, { title, intro }] of Object.entries(GROUPS) as [Group, (typeof GROUPS)[Group]][]) {
    const settings = SETTINGS.filter((s) => s.group === group);
    if (settings.length === 0) continue;
    lines.push(`## ${title}`, '', intro, '', '| variable | default | values | meaning |', '|---|---|---|---|');
    for (const setting of settings) {
      lines.push(
        `| \`${setting.name}\` | ${cell(defaultOf(setting))} | ${cell(valuesOf(setting))} | ${cell(setting.doc)} |`,
      );
    }
    lines.push('');
  }
  lines.push(
    '## Former settings',
    '',
    'Still set after an upgrade, each is named in a start-up warning saying what became of its value. One whose',
    'meaning carries over keeps working, read as the setting that replaced it. A bound that became a constant',
    'is at most that constant: a lower (stricter) value is kept, and the warning says which value applies.',
    'The rest are ignored, with the value that applies now.',
    '',
    '| variable | now | when set | where |',
    '|---|---|---|---|',
    ...FORMER_SETTINGS.map(
      (f) =>
        `| \`${f.name}\` | ${cell(f.carry ? `\`${f.replacedBy}\`` : f.now)} | ${cell(whenSet(f))} | ${f.where ? `\`${f.where}\`` : ''} |`,
    ),
    '',
  );
  return lines.join('\n');
}
