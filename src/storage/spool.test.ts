/**
 * The spool on a real directory: files written from pieces, removed, and what a stopped process left
 * behind removed when the spool opens, while files in use by a live process (fresh ones) stay.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Spool } from './spool.js';

describe('Spool', () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes pieces one after another into a new file only its owner may read, and removes it', async () => {
    root = mkdtempSync(join(tmpdir(), 'pressroom-spool-'));
    const spool = await Spool.open(join(root, 'spool'));
    const file = await spool.write([Buffer.from('%PDF-1.4\n'), Buffer.alloc(0), Buffer.from('body\n%%EOF\n')]);
    expect(file.size).toBe(20);
    expect(readFileSync(file.path, 'latin1')).toBe('%PDF-1.4\nbody\n%%EOF\n');
    expect(statSync(file.path).mode & 0o777).toBe(0o600);
    expect(statSync(spool.dir).mode & 0o777).toBe(0o700);
    expect(spool.newPath()).not.toBe(spool.newPath());
    await spool.remove(file.path, spool.newPath(), undefined);
    expect(readdirSync(spool.dir)).toEqual([]);
  });

  it("removes a stopped process's leftovers (older than an hour) when it opens, and keeps fresh files", async () => {
    root = mkdtempSync(join(tmpdir(), 'pressroom-spool-'));
    const dir = join(root, 'spool');
    const first = await Spool.open(dir);
    const old = await first.write([Buffer.from('left by a crash')]);
    const fresh = await first.write([Buffer.from('in flight')]);
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(old.path, twoHoursAgo, twoHoursAgo);
    writeFileSync(join(dir, 'unrelated'), 'x');
    await Spool.open(dir);
    expect(readdirSync(dir).sort()).toEqual([fresh.path.slice(dir.length + 1), 'unrelated'].sort());
  });
});
