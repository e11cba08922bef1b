/**
 * The spool on a real directory: its files named and removed, and what a stopped process left behind
 * removed when the spool opens, while files in use by a live process (fresh ones) stay.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Spool } from './spool.js';

describe('Spool', () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('opens a directory only its owner may enter, names new files at random, and removes them', async () => {
    root = mkdtempSync(join(tmpdir(), 'pressroom-spool-'));
    const spool = await Spool.open(join(root, 'spool'));
    expect(statSync(spool.dir).mode & 0o777).toBe(0o700);
    const [a, b] = [spool.newPath(), spool.newPath()];
    expect(a).not.toBe(b);
    expect(a.startsWith(`${spool.dir}/`)).toBe(true);
    writeFileSync(a, 'spooled');
    await spool.remove(a, b, undefined);
    expect(readdirSync(spool.dir)).toEqual([]);
  });

  it("removes a stopped process's leftovers (older than an hour) when it opens and when it sweeps, and keeps fresh files", async () => {
    root = mkdtempSync(join(tmpdir(), 'pressroom-spool-'));
    const dir = join(root, 'spool');
    const first = await Spool.open(dir);
    const [old, fresh] = [{ path: first.newPath() }, { path: first.newPath() }];
    writeFileSync(old.path, 'left by a crash');
    writeFileSync(fresh.path, 'in flight');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(old.path, twoHoursAgo, twoHoursAgo);
    writeFileSync(join(dir, 'unrelated'), 'x');
    await Spool.open(dir);
    expect(readdirSync(dir).sort()).toEqual([fresh.path.slice(dir.length + 1), 'unrelated'].sort());
    // A running process's sweep: the fresh file too, once it is an hour old.
    expect(await first.sweep(Date.now() + 2 * 60 * 60 * 1000)).toBe(2);
    expect(readdirSync(dir)).toEqual([]);
  });
});
