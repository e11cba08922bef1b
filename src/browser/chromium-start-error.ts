/**
 * Why Chromium did not start, in three kinds an operator fixes differently: the path names no file,
 * names a file that cannot be run, or names a program that ran but did not come up as Chromium.
 * The first two are checked before spawning: spawning a file without the execute bit makes Node
 * emit an `error` event that puppeteer does not handle, which would end the process.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';

/** `missing`: no such file; `not_executable`: a directory or a file without execute permission; `launch_failed`: it ran but did not start as Chromium. */
export type ChromiumStartProblem = 'missing' | 'not_executable' | 'launch_failed';

/** Chromium could not be started from `executablePath`; the message says why in a few words. */
export class ChromiumStartError extends Error {
  override readonly name = 'ChromiumStartError';
  constructor(
    readonly problem: ChromiumStartProblem,
    readonly executablePath: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Throws `ChromiumStartError` unless `path` is a file this process may execute. */
export async function assertExecutable(path: string): Promise<void> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR')
      throw new ChromiumStartError('missing', path, 'no such file', { cause: error });
    throw new ChromiumStartError('not_executable', path, `cannot be read (${error.code ?? error.message})`, {
      cause: error,
    });
  });
  if (!info.isFile()) throw new ChromiumStartError('not_executable', path, 'not a file (a directory?)');
  await access(path, constants.X_OK).catch((error: NodeJS.ErrnoException) => {
    throw new ChromiumStartError('not_executable', path, 'not executable (no execute permission)', { cause: error });
  });
}

/** Wraps a failed launch: the program ran (or could not be spawned) but never answered as Chromium. */
export function launchFailed(path: string, error: unknown): ChromiumStartError {
  // Puppeteer's message may run to many lines (browser stderr, a troubleshooting link): keep the start.
  const detail = (error instanceof Error ? error.message : String(error))
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(0, 3)
    .join(' ')
    .slice(0, 300);
  return new ChromiumStartError('launch_failed', path, `did not start as Chromium (${detail})`, { cause: error });
}
