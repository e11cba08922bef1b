/**
 * A batch's checked rows on disk until its items are queued (issue 49): one line per item, its file
 * name and its data as the job row stores them (JSON, so no raw newline inside). The rows are read
 * back a chunk at a time, so the memory a batch takes does not grow with its rows.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** One checked row, as its job row will hold it. */
export interface SpooledItem {
  filename: string | null;
  /** The row's data as JSON text. */
  data: string;
}

/** The spool file of one batch's rows: written once in row order, read back in chunks, then removed. */
export class RowSpool {
  private constructor(
    private readonly dir: string,
    private readonly out: WriteStream,
  ) {}

  /** A new, empty spool in a private temporary folder (rows are the customer's data). */
  static async create(): Promise<RowSpool> {
    const dir = await mkdtemp(join(tmpdir(), 'pressroom-rows-'));
    const out = createWriteStream(join(dir, 'rows'), { mode: 0o600 });
    out.on('error', () => undefined); // surfaced by the next write or by finish()
    return new RowSpool(dir, out);
  }

  private get path(): string {
    return join(this.dir, 'rows');
  }

  /** Appends one row; waits while the file's buffer is full, so the writer never runs ahead of the disk. */
  async add(item: SpooledItem): Promise<void> {
    if (!this.out.write(`${JSON.stringify(item.filename)}\t${item.data}\n`)) await once(this.out, 'drain');
  }

  /** Every row written and flushed. */
  async finish(): Promise<void> {
    this.out.end();
    await once(this.out, 'finish');
  }

  /** The rows in order, `size` at a time. */
  async *chunks(size: number): AsyncGenerator<SpooledItem[]> {
    let chunk: SpooledItem[] = [];
    const lines = createInterface({ input: createReadStream(this.path), crlfDelay: Infinity });
    for await (const line of lines) {
      const tab = line.indexOf('\t');
      chunk.push({ filename: JSON.parse(line.slice(0, tab)) as string | null, data: line.slice(tab + 1) });
      if (chunk.length === size) {
        yield chunk;
        chunk = [];
      }
    }
    if (chunk.length > 0) yield chunk;
  }

  /** Removes the file and its folder; never throws. */
  async remove(): Promise<void> {
    this.out.destroy();
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
