/**
 * The event loop's longest gap while something runs: a timer ticks every `everyMs`, and the gap is the
 * longest time between two ticks. `stop()` ends the timer and returns that gap in ms.
 */
export function watchLoopGap(everyMs = 1): { stop(): number } {
  let gap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return gap;
    },
  };
}
