/** Writes docs/settings.md from the settings' declarations (src/config/settings.ts): `npm run settings:docs`. */
import { writeFileSync } from 'node:fs';
import { settingsReference, SETTINGS_REFERENCE_PATH } from '../src/config/settings-reference.js';

writeFileSync(new URL(`../${SETTINGS_REFERENCE_PATH}`, import.meta.url), settingsReference());
process.stdout.write(`wrote ${SETTINGS_REFERENCE_PATH}\n`);
