/**
 * The rules for a spill file — where a long PDF goes instead of memory as Chromium streams it
 * (`readProtocolStream`), and is then titled in place (`document-info.ts`): every write writes all its
 * bytes, and a file that cannot be written is the document's storage failure (502, refunded).
 */
import type { FileHandle } from 'node:fs/promises';
import { AppError } from '../../shared/errors.js';

/**
 * Where a long stream goes instead of memory: once `aboveBytes` have arrived, what came so far and
 * every later chunk are written to `path` (created, or emptied) as they arrive. The file is removed
 * if reading fails.
 */
export interface StreamSpill {
  readonly path: string;
  readonly aboveBytes: number;
}

/** A spill file that cannot be written (a full disk, a missing directory): the document cannot be stored (502, refunded). */
export function spillWriteError(cause: unknown): AppError {
  const code = (cause as NodeJS.ErrnoException).code ?? 'an error';
  return new AppError(
    'STORAGE_ERROR',
    `The PDF could not be written to the spool directory: ${code}; retry the request`,
    { cause },
  );
}

/**
 * Writes all of `bytes` at `position`: a write may take only part of them (a disk filling up takes
 * what fits, then fails the next write), and a short file must never pass for a whole one.
 */
export async function writeAll(file: FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await file.write(bytes, done, bytes.length - done, position + done);
    if (bytesWritten === 0)
      throw Object.assign(new Error('no byte could be written'), { code: 'EIO', syscall: 'write' });
    done += bytesWritten;
  }
}
