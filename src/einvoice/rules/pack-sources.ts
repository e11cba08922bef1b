/**
 * The rules pack's input files, gathered and verified before anything is written: read from a local
 * copy (`--from DIR`, laid out as `<folder>/<path>` per manifest.ts) or downloaded from the pinned
 * upstream URLs. Every file's SHA-256 is compared with the manifest's; any difference (or a missing,
 * oversized or unreachable file) refuses the whole install, listing every file that failed.
 */
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { localPath, PACK_FILES, upstreamUrl, type PackFile } from './manifest.js';

/** The largest input file (the UBL common aggregate schema is 2.4 MB): a bound on each read and download. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** One download's deadline: the whole pack is about 5 MB from raw.githubusercontent.com. */
const DOWNLOAD_TIMEOUT_MS = 60_000;

/** A verified input: where it goes in the pack, and its bytes. */
export interface SourceFile {
  readonly file: PackFile;
  /** `<folder>/<path>`. */
  readonly path: string;
  readonly bytes: Buffer;
  readonly sha256: string;
}

/** The install was refused: these files are missing, unreadable or not the pinned ones. Nothing was written. */
export class RulesPackError extends Error {
  constructor(
    message: string,
    readonly problems: readonly string[] = [],
  ) {
    super(problems.length > 0 ? `${message}:\n${problems.map((p) => `  - ${p}`).join('\n')}` : message);
    this.name = 'RulesPackError';
  }
}

export const sha256Of = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Reads a file of at most MAX_FILE_BYTES; undefined when it does not exist. */
async function readBounded(path: string): Promise<Buffer | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size > MAX_FILE_BYTES) throw new Error(`${size} bytes, more than any pinned file (${MAX_FILE_BYTES})`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Downloads one URL, refusing a body past MAX_FILE_BYTES (it is counted as it arrives). */
export async function download(url: string): Promise<Buffer> {
  const response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS), redirect: 'follow' });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    if (total > MAX_FILE_BYTES) throw new Error(`more than ${MAX_FILE_BYTES} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** What the installer reads the inputs from: a local copy, or the network (tests pass their own `fetch`). */
export type SourceOrigin =
  | { kind: 'directory'; dir: string }
  | { kind: 'download'; fetch?: (url: string) => Promise<Buffer> };

/** Every pinned file, verified; throws RulesPackError naming every file that failed. */
export async function gatherSources(
  origin: SourceOrigin,
  log: (line: string) => void = () => {},
): Promise<SourceFile[]> {
  const problems: string[] = [];
  const files: SourceFile[] = [];
  const fetchFile = origin.kind === 'download' ? (origin.fetch ?? download) : undefined;
  if (fetchFile)
    log(`downloading ${PACK_FILES.length} files from their publishers' repositories (raw.githubusercontent.com)`);
  // Downloads four at a time: polite to the host, and the whole pack still arrives in seconds.
  const queue = [...PACK_FILES];
  const worker = async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const path = localPath(file);
      let bytes: Buffer | undefined;
      try {
        bytes = fetchFile
          ? await fetchFile(upstreamUrl(file))
          : await readBounded(join((origin as { dir: string }).dir, path));
      } catch (error) {
        problems.push(
          `${path}: ${fetchFile ? `could not be downloaded from ${upstreamUrl(file)}` : 'could not be read'} (${error instanceof Error ? error.message : String(error)})`,
        );
        continue;
      }
      if (!bytes) {
        problems.push(`${path}: missing`);
        continue;
      }
      const sha256 = sha256Of(bytes);
      if (sha256 !== file.sha256 && sha256 !== file.checkoutSha256) {
        problems.push(`${path}: SHA-256 ${sha256}, not the pinned ${file.sha256} (a changed or different file)`);
        continue;
      }
      files.push({ file, path, bytes, sha256 });
    }
  };
  await Promise.all(Array.from({ length: fetchFile ? 4 : 1 }, worker));
  if (problems.length > 0) {
    problems.sort();
    throw new RulesPackError(
      `${problems.length} of the ${PACK_FILES.length} pinned files failed verification; nothing was installed`,
      problems,
    );
  }
  // The manifest's order, whatever order the downloads finished in.
  return PACK_FILES.map((file) => files.find((f) => f.file === file)!);
}
