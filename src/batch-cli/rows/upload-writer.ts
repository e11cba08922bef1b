/** The temporary upload a CSV or NDJSON rows file is rewritten to, written in chunks, counting its lines. */
import { open, type FileHandle } from 'node:fs/promises';

/** Text gathered before one write: few system calls, bounded memory. */
const CHUNK_CHARS = 1024 * 1024;

/** Appends text to a new file and knows at which line each appended piece starts. */
export class UploadWriter {
  private pending: string[] = [];
  private pendingChars = 0;
  private linesWritten = 0;

  private constructor(private readonly handle: FileHandle) {}

  static async create(path: string): Promise<UploadWriter> {
    return new UploadWriter(await open(path, 'wx', 0o600));
  }

  /** Appends `text` (whole lines); returns the 1-based line it starts on. */
  async append(text: string): Promise<number> {
    const startLine = this.linesWritten + 1;
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) this.linesWritten++;
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= CHUNK_CHARS) await this.flush();
    return startLine;
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.handle.close();
    }
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    await this.handle.write(text);
  }
}
