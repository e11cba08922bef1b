// Rewrites the table of filters, tests and globals in docs/templates.md from the one list
// (src/template-language/catalogue.ts). Run: node --import tsx scripts/update-language-table.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { languageTable } from '../src/template-language/catalogue.js';

const path = new URL('../docs/templates.md', import.meta.url);
const doc = readFileSync(path, 'utf8');
writeFileSync(
  path,
  doc.replace(
    /<!-- language-table:start -->\n[\s\S]*?<!-- language-table:end -->/,
    `<!-- language-table:start -->\n${languageTable()}\n<!-- language-table:end -->`,
  ),
);
