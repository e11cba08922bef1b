// Builds the server into dist/ when any source file is newer than dist/main.js (tests and the load
// test spawn `node bin/pressroom.js`, which runs dist/). Run under `flock` so parallel test files
// build once: the second one finds dist fresh. The studio is not rebuilt (not needed by these runs).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const main = join(root, 'dist', 'main.js');
if (!existsSync(main) || newestSource(join(root, 'src')) > statSync(main).mtimeMs) {
  process.stderr.write('[build-dist] dist/ is older than src/: tsc -p tsconfig.build.json\n');
  execFileSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    { cwd: root, stdio: 'inherit' },
  );
  execFileSync(process.execPath, ['scripts/copy-assets.mjs'], { cwd: root, stdio: 'inherit' });
}
