/** A batch's failed items with their errors, as `GET …/items?status=failed` pages them. */
import type { BatchClient } from './batch-client.js';

/** Items per listing page (the API's largest). */
export const PAGE_SIZE = 1000;

/** Every failed item's index → its error as one line. */
export async function listFailedItems(client: BatchClient, batchId: string): Promise<Map<number, string>> {
  const failed = new Map<number, string>();
  for (let offset = 0; ; offset += PAGE_SIZE) {
    const page = await client.listItems(batchId, { status: 'failed', offset, limit: PAGE_SIZE });
    for (const item of page.items) failed.set(item.index, errorText(item.error));
    if (page.items.length < PAGE_SIZE || offset + PAGE_SIZE >= page.total) return failed;
  }
}

/** An item's `error` as one line: `CODE: message`, or the message. */
export function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof message === 'string') return typeof code === 'string' ? `${code}: ${message}` : message;
  }
  return error === null || error === undefined ? 'failed (no reason given)' : JSON.stringify(error).slice(0, 500);
}
