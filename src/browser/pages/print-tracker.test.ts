/** Which print owned a killed print compositor: only a print that can have owned it is ever stopped. */
import { describe, expect, it } from 'vitest';
import { nowTicks } from '../process-memory-watch.js';
import { PrintTracker } from './print-tracker.js';

const REASON = new Error('memory');
/** Longer than the tracker's half second in which a PDF returned after a kill proves nothing. */
const pause = () => new Promise((resolve) => setTimeout(resolve, 700));

describe('PrintTracker', () => {
  it('stops the only print in flight that began before the compositor started', () => {
    const tracker = new PrintTracker();
    const owner = tracker.begin();
    tracker.compositorKilled(nowTicks() + 5, REASON);
    expect(owner.signal.aborted).toBe(true);
    expect(owner.signal.reason).toBe(REASON);
  });

  it('never stops a print that began after the compositor started, nor one that has returned', () => {
    const tracker = new PrintTracker();
    const returned = tracker.begin();
    returned.end(true);
    const startedAt = nowTicks() - 100; // a compositor started a second ago
    const later = tracker.begin();
    tracker.compositorKilled(startedAt, REASON);
    expect(later.signal.aborted).toBe(false);
  });

  it('with two suspects, stops the one left once the other has returned a PDF', async () => {
    const tracker = new PrintTracker();
    const owner = tracker.begin();
    const innocent = tracker.begin();
    tracker.compositorKilled(nowTicks(), REASON);
    expect(owner.signal.aborted || innocent.signal.aborted).toBe(false);
    await pause();
    innocent.end(true);
    expect(owner.signal.aborted).toBe(true);
    expect(innocent.signal.aborted).toBe(false);
  });

  it('concludes nothing when the other suspect failed, or returned right after the kill', async () => {
    for (const how of ['failed', 'returned at once'] as const) {
      const tracker = new PrintTracker();
      const a = tracker.begin();
      const b = tracker.begin();
      tracker.compositorKilled(nowTicks(), REASON);
      b.end(how === 'returned at once');
      expect(a.signal.aborted, how).toBe(false);
    }
  });
});
