/** The layer-listing thread's bounds: one account's share, the line, the time and memory limits (thread replaced), shutting down. */
import { afterEach, describe, expect, it } from 'vitest';
import { isAppError } from '../../shared/errors.js';
import { LayerListingPool, type LayerListingOptions } from './layer-listing.js';

const CARD = '<h1 data-layer="title">Hi</h1><img data-layer="logo">';
const pools: LayerListingPool[] = [];
const pool = (options: Partial<LayerListingOptions> = {}) => {
  const created = new LayerListingPool({ lineLimit: 4, accountLimit: 2, memoryMb: 256, timeoutMs: 60_000, ...options });
  pools.push(created);
  return created;
};
const code = (error: unknown) => (isAppError(error) ? error.code : String(error));

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('LayerListingPool', () => {
  it('lists on its thread, one listing after the other', async () => {
    const listings = pool();
    const [a, b] = await Promise.all([listings.list(CARD, 'acc_a'), listings.list('<p data-layer="x">x</p>', 'acc_b')]);
    expect(a).toEqual({
      layers: [
        expect.objectContaining({ name: 'background' }),
        expect.objectContaining({ name: 'title', currentText: 'Hi' }),
        expect.objectContaining({ name: 'logo', type: 'image' }),
      ],
      warnings: [],
    });
    expect(b).toMatchObject({ layers: [{ name: 'background' }, { name: 'x' }] });
    expect(listings.stats()).toEqual({ waiting: 0, running: false });
  });

  it('refuses an account past its share (429) and anyone past the line (503); the others are listed', async () => {
    const listings = pool({ lineLimit: 2, accountLimit: 2 });
    const first = listings.list(CARD, 'acc_a');
    const second = listings.list(CARD, 'acc_a');
    await expect(listings.list(CARD, 'acc_a')).rejects.toSatisfy((error) => code(error) === 'RATE_LIMITED');
    // One running, one waiting: the line holds one more, then it is full.
    const third = listings.list(CARD, 'acc_b');
    await expect(listings.list(CARD, 'acc_c')).rejects.toSatisfy((error) => code(error) === 'SERVICE_UNAVAILABLE');
    for (const listing of await Promise.all([first, second, third])) expect(listing).toHaveProperty('layers');
    // Shares are given back once answered.
    expect(await listings.list(CARD, 'acc_a')).toHaveProperty('layers');
  });

  it('stops a listing past its time (504), and lists the next one on a new thread', async () => {
    const listings = pool();
    await expect(listings.list(`${'<div>'.repeat(200_000)}<b data-layer="deep">x</b>`, 'acc_a', 1)).rejects.toSatisfy(
      (error) => code(error) === 'RENDER_TIMEOUT',
    );
    expect(await listings.list(CARD, 'acc_a')).toHaveProperty('layers');
  });

  it('answers a template whose parse needs more than the heap cap with 422, and lists the next one', async () => {
    const listings = pool({ memoryMb: 64 });
    await expect(listings.list('<b a>'.repeat(400_000), 'acc_a')).rejects.toSatisfy(
      (error) => isAppError(error, 'DOCUMENT_TOO_LARGE') && error.details?.bound === 'memory',
    );
    expect(await listings.list(CARD, 'acc_a')).toHaveProperty('layers');
  });

  it('close() refuses the running and waiting listings with 503', async () => {
    const listings = pool();
    const running = listings.list(CARD, 'acc_a').catch((error: unknown) => code(error));
    const waiting = listings.list(CARD, 'acc_b').catch((error: unknown) => code(error));
    await listings.close();
    expect(await Promise.all([running, waiting])).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
  });
});
