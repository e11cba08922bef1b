import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A zip's entries, checked and extracted with Python's zipfile (a reader that is not ours). */
export function unzip(bytes: Buffer): Map<string, Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'test-zip-'));
  try {
    writeFileSync(join(dir, 'b.zip'), bytes);
    execFileSync('python3', [
      '-c',
      'import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; z.extractall(sys.argv[2])',
      join(dir, 'b.zip'),
      join(dir, 'out'),
    ]);
    return new Map(readdirSync(join(dir, 'out')).map((name) => [name, readFileSync(join(dir, 'out', name))]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
