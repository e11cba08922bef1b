import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  createProgressReporter,
  formatProgressLine,
  formatRate,
  formatTimeLeft,
  RateMeter,
  type ProgressSnapshot,
} from './progress.js';

const snapshot = (s: Partial<ProgressSnapshot>): ProgressSnapshot => ({
  total: 3,
  completed: 0,
  failed: 0,
  cancelled: 0,
  ratePerSecond: null,
  secondsLeft: null,
  ...s,
});

describe('plain progress lines', () => {
  it.each([
    [snapshot({}), 'progress: 0/3 done, 0 failed, -/s, time left unknown'],
    [
      snapshot({ completed: 2, failed: 1, ratePerSecond: 1.5, secondsLeft: 4 }),
      'progress: 2/3 done, 1 failed, 1.5/s, about 4 s left',
    ],
    [
      snapshot({ total: 1000, completed: 412, cancelled: 7, ratePerSecond: 23.4, secondsLeft: 125 }),
      'progress: 412/1000 done, 0 failed, 7 cancelled, 23/s, about 2 min 5 s left',
    ],
    [
      snapshot({ total: 50000, completed: 10, ratePerSecond: 0.3, secondsLeft: 3 * 3600 + 65 }),
      'progress: 10/50000 done, 0 failed, 18/min, about 3 h 1 min left',
    ],
  ])('%j → %s', (s, line) => {
    expect(formatProgressLine(s)).toBe(line);
  });

  it.each([
    [null, '-/s'],
    [0.001, '1/min'],
    [1, '1.0/s'],
    [9.96, '10.0/s'],
    [10, '10/s'],
  ])('rate %s → %s', (rate, text) => expect(formatRate(rate)).toBe(text));

  it.each([
    [null, 'time left unknown'],
    [-1, 'time left unknown'],
    [0, 'about 0 s left'],
    [59.6, 'about 1 min 0 s left'],
  ])('time left %s → %s', (seconds, text) => expect(formatTimeLeft(seconds)).toBe(text));

  it('writes one line per step, none for a poll that changed nothing', () => {
    const stream = new PassThrough();
    const reporter = createProgressReporter(stream as unknown as NodeJS.WriteStream);
    reporter.update(snapshot({}));
    reporter.update(snapshot({}));
    reporter.update(snapshot({ completed: 1, ratePerSecond: 2 }));
    reporter.update(snapshot({ completed: 1, ratePerSecond: 1 }));
    reporter.update(snapshot({ completed: 3, secondsLeft: 0 }));
    reporter.stop();
    expect(String(stream.read()).split('\n')).toEqual([
      'progress: 0/3 done, 0 failed, -/s, time left unknown',
      'progress: 1/3 done, 0 failed, 2.0/s, time left unknown',
      'progress: 3/3 done, 0 failed, -/s, about 0 s left',
      '',
    ]);
  });
});

describe('the rate', () => {
  it('is unknown at the first poll and while nothing rendered, then items per second since the first poll', () => {
    const meter = new RateMeter();
    expect(meter.observe(5, 10_000)).toBeNull();
    expect(meter.observe(5, 12_000)).toBeNull();
    expect(meter.observe(5 + 8, 14_000)).toBe(2);
  });
});
