/**
 * The signing pool's shares (issue 49), with tasks held open by the test so nothing depends on time:
 * free work (certificate checks, verifications) never holds every slot, so a paid signature is served
 * while free work waits; one account never holds every slot, so another account is served while its
 * second task waits, even with a slot idle.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createSigningPool } from './signing-pool.js';

/** A task the test ends: `started` once it holds a slot. */
function heldTask() {
  let release!: () => void;
  let started = false;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    work: async () => {
      started = true;
      await done;
      return 'held';
    },
    release,
    started: () => started,
  };
}

describe('signing pool', () => {
  const pool = createSigningPool({ slots: 2, timeoutMs: 60_000, maxWaitMs: 60_000 });
  afterAll(() => pool.close());

  it("keeps a slot for paid work: two accounts' free checks hold one, the other waits, and a paid signature runs", async () => {
    const [a, b] = [heldTask(), heldTask()];
    const running = [
      pool.run({ accountId: 'a', kind: 'free' }, a.work),
      pool.run({ accountId: 'b', kind: 'free' }, b.work),
    ];
    expect(pool.stats()).toMatchObject({ active: 1, waiting: 1 });
    expect(await pool.run({ accountId: 'c', kind: 'paid' }, async () => 'signed')).toBe('signed');
    expect(a.started() !== b.started()).toBe(true);
    a.release();
    b.release();
    expect(await Promise.all(running)).toEqual(['held', 'held']);
  });

  it("keeps a slot for another account: one account's second signature waits, even with a slot idle, while another's runs", async () => {
    const [first, second] = [heldTask(), heldTask()];
    const running = [
      pool.run({ accountId: 'a', kind: 'paid' }, first.work),
      pool.run({ accountId: 'a', kind: 'paid' }, second.work),
    ];
    expect(pool.stats()).toMatchObject({ active: 1, waiting: 1 });
    expect(await pool.run({ accountId: 'b', kind: 'paid' }, async () => 'signed')).toBe('signed');
    expect(second.started()).toBe(false);
    first.release();
    await expect.poll(second.started).toBe(true);
    second.release();
    await Promise.all(running);
  });
});
