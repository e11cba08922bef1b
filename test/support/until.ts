/** Waiting on state in tests: a condition polled until it holds, under a generous deadline. */

/** Polls `what` every 50 ms until it returns something truthy; throws after `timeoutMs`. */
export async function until<T>(
  what: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  timeoutMs: number,
  label: string,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await what();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
