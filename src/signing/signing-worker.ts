/**
 * The signing thread (a `worker_threads` thread of signing-threads.ts): opens the PKCS#12, loads the
 * PDF, draws the visible mark and signs with libpdf, so its password hashing, parsing and writing
 * never hold the event loop; and opens an uploaded PKCS#12 to check it (pkcs12.ts). A time-stamp is
 * asked of the main thread (which owns the guarded dispatcher): the thread posts
 * `{id, kind: 'timestamp', digest, algorithm}` and waits for `{kind: 'token'}` or `{kind: 'tsa-error'}`.
 *
 * In: a SignTask (PDF and PKCS#12 transferred) or an OpenTask. Out: `{id, kind: 'signed', bytes}`
 * (transferred), `{id, kind: 'opened', certificate}`, `{id, kind: 'refused', type, message}` (the
 * PKCS#12's refusal) or `{id, kind: 'failed', reason, message}`.
 */
import { parentPort } from 'node:worker_threads';
import { announceReady } from '../shared/task-threads.js';
import { PDF, rgb, type DigestAlgorithm, type P12Signer } from '@libpdf/core';
import {
  certificateFacts,
  checkKeyStrength,
  openAndCheckPkcs12,
  openPkcs12,
  Pkcs12Refusal,
  type Pkcs12RefusalType,
} from './pkcs12.js';
import { SIGNATURE_OVERHEAD_BYTES, SIGNATURE_RESERVED_BYTES } from './signing-bounds.js';

/** What the thread signs. */
export interface SignTask {
  readonly id: number;
  readonly kind: 'sign';
  readonly pdf: ArrayBuffer;
  readonly p12: ArrayBuffer;
  readonly password: string;
  readonly reason: string | null;
  readonly location: string | null;
  readonly contactInfo: string | null;
  readonly timestamp: boolean;
  readonly visible: { page: number; x: number; y: number; width: number; height: number } | null;
}

/** An uploaded PKCS#12 to open and check (its cost already bounded: pkcs12-costs.ts). */
export interface OpenTask {
  readonly id: number;
  readonly kind: 'open';
  readonly p12: ArrayBuffer;
  readonly password: string;
}

/** What the main thread hears. */
export type ThreadMessage =
  | { readonly id: number; readonly kind: 'signed'; readonly bytes: ArrayBuffer }
  | { readonly id: number; readonly kind: 'opened'; readonly certificate: Uint8Array }
  | { readonly id: number; readonly kind: 'refused'; readonly type: Pkcs12RefusalType; readonly message: string }
  | {
      readonly id: number;
      readonly kind: 'failed';
      readonly reason: 'page_out_of_range' | 'unreadable' | 'tsa' | 'failed';
      readonly message: string;
    }
  | {
      readonly id: number;
      readonly kind: 'timestamp';
      readonly digest: Uint8Array;
      readonly algorithm: DigestAlgorithm;
    };

/** What the thread hears besides tasks: the answer to its time-stamp request. */
export type TimestampAnswer =
  | { readonly id: number; readonly kind: 'token'; readonly token: Uint8Array }
  | { readonly id: number; readonly kind: 'tsa-error'; readonly message: string };

class PageOutOfRange extends Error {}
class TimestampRefused extends Error {}

const waiting = new Map<number, (answer: TimestampAnswer) => void>();

/** The mark's lines, sized to its box. */
function drawMark(pdf: PDF, task: SignTask, signer: P12Signer): void {
  const visible = task.visible!;
  const page = pdf.getPage(visible.page - 1);
  if (!page) throw new PageOutOfRange(`The document has ${pdf.getPageCount()} pages; there is no page ${visible.page}`);
  const who = certificateFacts(signer.certificate).subject.match(/CN=([^,]+)/)?.[1] ?? 'the signer';
  const lines = [`Digitally signed by ${who}`, `Date: ${new Date().toISOString().replace('T', ' ').slice(0, 19)} UTC`];
  if (task.reason) lines.push(`Reason: ${task.reason}`);
  if (task.location) lines.push(`Location: ${task.location}`);
  const size = Math.max(4, Math.min(10, (visible.height - 6) / (lines.length * 1.25)));
  page.drawRectangle({
    x: visible.x,
    y: visible.y,
    width: visible.width,
    height: visible.height,
    borderColor: rgb(0.2, 0.2, 0.5),
    borderWidth: 1,
  });
  lines.forEach((line, i) => {
    page.drawText(line, {
      x: visible.x + 4,
      y: visible.y + visible.height - 4 - size * (i + 1) * 1.2,
      size,
      maxWidth: visible.width - 8,
      color: rgb(0.1, 0.1, 0.3),
    });
  });
}

async function sign(task: SignTask): Promise<Uint8Array> {
  const signer = await openPkcs12(new Uint8Array(task.p12), task.password);
  // A certificate stored before keys were checked (issue 49) is refused now, refunded.
  checkKeyStrength(signer.certificate);
  const pdf = await PDF.load(new Uint8Array(task.pdf)).catch((error: unknown) => {
    throw Object.assign(new Error(error instanceof Error ? error.message : String(error)), { unreadable: true });
  });
  if (task.visible) drawMark(pdf, task, signer);
  const timestampAuthority = task.timestamp
    ? {
        timestamp: (digest: Uint8Array, algorithm: DigestAlgorithm) =>
          new Promise<Uint8Array>((resolve, reject) => {
            waiting.set(task.id, (answer) =>
              answer.kind === 'token' ? resolve(answer.token) : reject(new TimestampRefused(answer.message)),
            );
            parentPort!.postMessage({ id: task.id, kind: 'timestamp', digest, algorithm } satisfies ThreadMessage);
          }),
      }
    : undefined;
  const result = await pdf.sign({
    signer,
    reason: task.reason ?? undefined,
    location: task.location ?? undefined,
    contactInfo: task.contactInfo ?? undefined,
    level: task.timestamp ? 'B-T' : 'B-B',
    timestampAuthority,
    estimatedSize: Math.max(
      SIGNATURE_RESERVED_BYTES,
      [signer.certificate, ...signer.certificateChain].reduce((n, der) => n + der.length, 0) + SIGNATURE_OVERHEAD_BYTES,
    ),
  });
  return result.bytes;
}

function failed(id: number, error: unknown): ThreadMessage {
  const text = error instanceof Error ? error.message : String(error);
  if (error instanceof Pkcs12Refusal) return { id, kind: 'refused', type: error.type, message: text };
  const reason =
    error instanceof PageOutOfRange
      ? 'page_out_of_range'
      : error instanceof TimestampRefused
        ? 'tsa'
        : (error as { unreadable?: boolean }).unreadable
          ? 'unreadable'
          : 'failed';
  return { id, kind: 'failed', reason, message: text };
}

parentPort?.on('message', (message: SignTask | OpenTask | TimestampAnswer) => {
  if (message.kind === 'token' || message.kind === 'tsa-error') {
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
    return;
  }
  if (message.kind === 'open') {
    openAndCheckPkcs12(new Uint8Array(message.p12), message.password).then(
      (certificate) => parentPort!.postMessage({ id: message.id, kind: 'opened', certificate } satisfies ThreadMessage),
      (error: unknown) => parentPort!.postMessage(failed(message.id, error)),
    );
    return;
  }
  sign(message).then(
    (bytes) => {
      const out =
        bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
          ? (bytes.buffer as ArrayBuffer)
          : (bytes.slice().buffer as ArrayBuffer);
      parentPort!.postMessage({ id: message.id, kind: 'signed', bytes: out } satisfies ThreadMessage, [out]);
    },
    (error: unknown) => parentPort!.postMessage(failed(message.id, error)),
  );
});

announceReady();
