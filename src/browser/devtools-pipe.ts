/**
 * The DevTools protocol over Chromium's pipe (`--remote-debugging-pipe`: we write to its fd 3 and
 * read its fd 4, messages separated by NUL bytes), as puppeteer's `ConnectionTransport`.
 *
 * Puppeteer's own pipe transport holds a message however large it is and turns it into one string,
 * and any error while a message is handled is thrown where nothing catches it. Issue 15 ended the
 * whole service that way: a 400 MB PDF came back inside one message, its string passed V8's limit
 * (ERR_STRING_TOO_LONG, ~512 MiB) and Node exited with every tenant's requests. Here:
 *  - a message longer than `maxMessageBytes` is never assembled: its bytes are dropped as they
 *    arrive, and the command that asked for it gets a protocol error instead (an event is dropped),
 *    so only the render that caused it fails;
 *  - an error while a message is handled (malformed JSON, a throwing listener) is logged and the
 *    message dropped; read and write errors of the pipe are logged (the browser's exit is noticed
 *    through the pipe closing, as a crash).
 * PDFs never travel inside one message anyway: they are streamed in bounded chunks (print-page.ts).
 */
import type { Readable, Writable } from 'node:stream';
import type { ConnectionTransport } from 'puppeteer-core';
import type { Logger } from '../shared/log.js';

/**
 * Largest message taken from Chromium: half of V8's longest string, and more than anything we ask
 * for (a PDF stream chunk is ≤ 8 MiB, ~11 MB as base64; a template's HTML is ≤ 20 MiB by default,
 * at most ~120 MB with every character escaped).
 */
export const MAX_DEVTOOLS_MESSAGE_BYTES = 256 * 1024 * 1024;

/** Bytes kept from each end of an oversized message, to answer the command it belongs to. */
const KEPT_ENDS_BYTES = 256;

export class DevToolsPipeTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** While an oversized message is being dropped: its first bytes and its last bytes so far. */
  #dropping: { head: Buffer; tail: Buffer; bytes: number } | undefined;
  #closed = false;

  constructor(
    private readonly toBrowser: Writable,
    private readonly fromBrowser: Readable,
    private readonly logger: Logger,
    private readonly maxMessageBytes = MAX_DEVTOOLS_MESSAGE_BYTES,
  ) {
    fromBrowser.on('data', this.#onData);
    fromBrowser.on('close', this.#onClose);
    fromBrowser.on('error', this.#onPipeError);
    toBrowser.on('error', this.#onPipeError);
  }

  send(message: string): void {
    if (this.#closed) return;
    // One write, not two (message, then its NUL): each is a system call that wakes the browser.
    this.toBrowser.write(`${message}\0`);
  }

  close(): void {
    this.#closed = true;
    this.fromBrowser.off('data', this.#onData);
    this.#pending = [];
    this.#dropping = undefined;
  }

  readonly #onPipeError = (error: Error) => {
    this.logger.warn({ err: error }, 'DevTools pipe error');
  };

  readonly #onClose = () => {
    this.close();
    this.onclose?.();
  };

  readonly #onData = (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(0); end !== -1; end = chunk.indexOf(0, start)) {
      this.#take(chunk.subarray(start, end));
      this.#finishMessage();
      start = end + 1;
    }
    if (start < chunk.length) this.#take(chunk.subarray(start));
  };

  /** Adds part of the current message, switching to dropping it once it is over the bound. */
  #take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.#dropping) {
      this.#dropping.bytes += part.length;
      this.#dropping.tail = lastBytes(Buffer.concat([this.#dropping.tail, lastBytes(part)]));
      return;
    }
    this.#pending.push(part);
    this.#pendingBytes += part.length;
    if (this.#pendingBytes <= this.maxMessageBytes) return;
    const all = this.#pending;
    this.#dropping = {
      head: firstBytes(all),
      tail: lastBytes(all[all.length - 1]!),
      bytes: this.#pendingBytes,
    };
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  #finishMessage(): void {
    const dropped = this.#dropping;
    this.#dropping = undefined;
    if (dropped) return this.#answerOversized(dropped);
    if (this.#pendingBytes === 0) return;
    const message = Buffer.concat(this.#pending, this.#pendingBytes).toString('utf8');
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#deliver(message);
  }

  /**
   * Chromium writes a command's answer as `{"id":N,"result":…,"sessionId":"…"}` (the session last):
   * the command gets an error of its own, routed to its session, instead of the answer.
   */
  #answerOversized(dropped: { head: Buffer; tail: Buffer; bytes: number }): void {
    const id = /^\{"id":(\d+),/.exec(dropped.head.toString('latin1'))?.[1];
    const sessionId = /"sessionId":"([0-9A-Fa-f]+)"\}\s*$/.exec(dropped.tail.toString('latin1'))?.[1];
    this.logger.warn(
      { bytes: dropped.bytes, limit: this.maxMessageBytes, id, sessionId },
      'DevTools message over the size bound dropped',
    );
    if (id === undefined) return;
    const error = { code: -32000, message: `The answer was larger than ${this.maxMessageBytes} bytes and was dropped` };
    this.#deliver(JSON.stringify({ id: Number(id), error, ...(sessionId ? { sessionId } : {}) }));
  }

  /** Hands a message on, on its own turn of the event loop (as puppeteer's transport does), never throwing. */
  #deliver(message: string): void {
    setImmediate(() => {
      if (this.#closed) return;
      try {
        // puppeteer's Connection.onMessage is async: its failures come back as a rejected promise.
        const handled = this.onmessage?.(message) as unknown;
        if (handled instanceof Promise) handled.catch(this.#onHandlerError);
      } catch (error) {
        this.#onHandlerError(error);
      }
    });
  }

  readonly #onHandlerError = (error: unknown) => {
    this.logger.error({ err: error }, 'a DevTools message could not be handled; dropped');
  };
}

/** The first KEPT_ENDS_BYTES of a message held as parts. */
function firstBytes(parts: Buffer[]): Buffer {
  const kept: Buffer[] = [];
  let bytes = 0;
  for (const part of parts) {
    if (bytes >= KEPT_ENDS_BYTES) break;
    kept.push(part.subarray(0, KEPT_ENDS_BYTES - bytes));
    bytes += kept[kept.length - 1]!.length;
  }
  return Buffer.concat(kept);
}

function lastBytes(buffer: Buffer): Buffer {
  return buffer.length <= KEPT_ENDS_BYTES ? buffer : Buffer.from(buffer.subarray(buffer.length - KEPT_ENDS_BYTES));
}
