/**
 * The fixed parts of how render slots are shared between accounts (config `renderFairness`,
 * docs/rendering.md "Fair rendering"); the operator sets the slots one account may hold
 * (PRESSROOM_RENDER_ACCOUNT_SLOTS).
 */

/** Slots previews may hold at once, all accounts together: half, so paid documents always keep the rest. */
export function previewSlotsFor(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency / 2));
}

/** Renders one account may have waiting before 429: a quarter of the line, so one account cannot fill it. */
export function accountQueueLimitFor(queueLimit: number): number {
  return Math.max(1, Math.floor(queueLimit / 4));
}

/** Previews one account may have waiting before 429: an editor waits for its latest preview, not a backlog. */
export const PREVIEW_QUEUE_LIMIT = 2;

/**
 * Render time one account's failed and timed-out renders (free of charge) may take per window before
 * its renders wait behind every other account's: two render deadlines' worth…
 */
export const FAILURE_BUDGET_SECONDS = 60;

/** …per ten minutes, sliding. */
export const FAILURE_WINDOW_SECONDS = 600;
