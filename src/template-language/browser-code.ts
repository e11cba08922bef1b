/**
 * The template language's browser-side code (`browser/*.ts`, type-checked with the DOM's types by
 * `browser/tsconfig.json`), bundled by esbuild into one script per entry:
 *  - `npm run build` (scripts/copy-assets.mjs) writes the bundles next to this module in dist/
 *    (`dist/template-language/browser/<entry>.js`), which the service then reads;
 *  - running from source (tests, `tsx`), where no bundle sits next to this file, they are built in
 *    memory once per process with the same options.
 * Either way the result is checked for what SES refuses to evaluate and what would end an inline
 * `<script>` early (REFUSED).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One bundle per place the code runs. */
export const BROWSER_ENTRIES = {
  /** After SES, before anything else on the compartment page. */
  lockdown: 'lockdown-entry.ts',
  /** The page's harness (main world). */
  harness: 'harness-entry.ts',
  /** Evaluated in every document's Compartment; defines `pressroomDocument`. */
  compartment: 'compartment-entry.ts',
} as const;

export type BrowserEntry = keyof typeof BROWSER_ENTRIES;

/**
 * What a bundle must not hold. SES refuses any source holding an HTML comment token, `import(` or
 * `eval(` (even in a string): that binds what a Compartment evaluates. The others sit in the
 * evaluator page's inline `<script>`, which `</script` would end
 * and `<script` after a `<!--` would keep from ending; Markdown's parser holds `<!--` in a regular
 * expression, which is harmless there.
 */
const REFUSED: Record<BrowserEntry, RegExp> = {
  compartment: /<!--|-->|\bimport\s*\(|\beval\s*\(|<\/?script/i,
  lockdown: /<\/?script/i,
  harness: /<\/?script/i,
};

const require = createRequire(import.meta.url);
const here = fileURLToPath(new URL('.', import.meta.url));
const cache = new Map<BrowserEntry, string>();

/** The bundle of `entry`, as script source. */
export function browserCode(entry: BrowserEntry): string {
  let code = cache.get(entry);
  if (code === undefined) {
    const built = join(here, 'browser', `${entry}.js`);
    code = existsSync(built) ? readFileSync(built, 'utf8') : bundle(join(here, 'browser'), entry);
    cache.set(entry, code);
  }
  return code;
}

/** Builds every bundle from `sourceDir` into `outDir` (the build step; see scripts/copy-assets.mjs). */
export function writeBrowserCode(sourceDir: string, outDir: string): void {
  mkdirSync(outDir, { recursive: true });
  for (const entry of Object.keys(BROWSER_ENTRIES) as BrowserEntry[])
    writeFileSync(join(outDir, `${entry}.js`), bundle(sourceDir, entry));
}

function bundle(sourceDir: string, entry: BrowserEntry): string {
  // esbuild is a build-time tool (a dev dependency): loaded only when a bundle is missing.
  const esbuild = require('esbuild') as typeof import('esbuild');
  const result = esbuild.buildSync({
    entryPoints: [join(sourceDir, BROWSER_ENTRIES[entry])],
    bundle: true,
    write: false,
    format: 'iife',
    ...(entry === 'compartment' ? { globalName: 'pressroomDocument' } : {}),
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.text;
  const refused = REFUSED[entry].exec(code);
  if (refused)
    throw new Error(
      `the ${entry} bundle holds "${refused[0]}", which the evaluator page cannot take; spell it differently in src/template-language/browser`,
    );
  return code;
}
