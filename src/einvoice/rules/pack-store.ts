/**
 * Where the installed rules pack lives and how the service reads it. Under the data directory:
 *
 *   einvoice-rules/active.json         {"pack": "<directory>"}: which pack is active (replaced atomically)
 *   einvoice-rules/packs/<directory>/  one installed pack:
 *     pack.json                        what it is: id, rule sets, sources, every file's SHA-256
 *     source/<folder>/<path>           the verified official files (the UBL schemas are read from here)
 *     compiled/<stylesheet>.sef.json   the stylesheets the validation threads load
 *
 * A pack directory is written whole before active.json names it, so a reader sees the old pack or the
 * new one, never half of one. The service reads active.json on every e-invoice check (a stat, and a read
 * when it changed): a pack installed while it runs is used by the next check, no restart needed.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PackSource } from './manifest.js';
import { COMPILER, STYLESHEETS, type StylesheetId } from './pack-build.js';

/** The pack's own description (pack.json). */
export interface PackDescription {
  readonly format: 1;
  /** The SHA-256 of the inputs' hashes and the compiler's version: equal ids, equal packs. */
  readonly id: string;
  readonly installed_at: string;
  readonly rule_sets: { readonly en16931: string; readonly xrechnung: string };
  readonly compiler: string;
  readonly sources: readonly (PackSource & { readonly url: string })[];
  /** Every file of `source/`, by its path there. */
  readonly files: readonly { readonly path: string; readonly sha256: string }[];
  readonly compiled: Readonly<
    Record<StylesheetId, { readonly file: string; readonly sha256: string; readonly bytes: number }>
  >;
}

/** The active pack as the checks use it. */
export interface ActivePack {
  readonly description: PackDescription;
  /** Absolute directory of the pack. */
  readonly dir: string;
  /** Each stylesheet's SEF, absolute, with the hash the validation thread checks when it loads it. */
  readonly stylesheets: Readonly<Record<StylesheetId, { readonly path: string; readonly sha256: string }>>;
}

export const RULES_DIR = 'einvoice-rules';
export const ACTIVE_FILE = 'active.json';
export const PACKS_DIR = 'packs';
export const PACK_FILE = 'pack.json';
export const SOURCE_DIR = 'source';
export const COMPILED_DIR = 'compiled';

/** The rules directory of a data directory. */
export const rulesDir = (dataDir: string): string => join(dataDir, RULES_DIR);

/** A pack that is named active but cannot be used (a file missing or unreadable): reinstall it. */
export class DamagedPackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DamagedPackError';
  }
}

/** Reads the pack in `packDir`; throws DamagedPackError when pack.json is missing or not a pack's. */
export async function readPack(packDir: string): Promise<ActivePack> {
  let description: PackDescription;
  try {
    description = JSON.parse(await readFile(join(packDir, PACK_FILE), 'utf8')) as PackDescription;
  } catch (error) {
    throw new DamagedPackError(
      `${join(packDir, PACK_FILE)} cannot be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (
    description?.format !== 1 ||
    typeof description.id !== 'string' ||
    !STYLESHEETS.every((id) => description.compiled?.[id]?.sha256)
  ) {
    throw new DamagedPackError(
      `${join(packDir, PACK_FILE)} does not describe a rules pack this version of Pressroom reads`,
    );
  }
  if (description.compiler !== COMPILER)
    throw new DamagedPackError(
      `the pack was compiled by ${description.compiler}; this Pressroom runs ${COMPILER}: reinstall it`,
    );
  const stylesheets = Object.fromEntries(
    STYLESHEETS.map((id) => [
      id,
      { path: join(packDir, COMPILED_DIR, description.compiled[id].file), sha256: description.compiled[id].sha256 },
    ]),
  ) as ActivePack['stylesheets'];
  return { description, dir: packDir, stylesheets };
}

/** The pack active.json names, or null when none is installed; DamagedPackError when it cannot be read. */
export async function readActivePack(dataDir: string): Promise<ActivePack | null> {
  let pointer: { pack?: unknown };
  try {
    pointer = JSON.parse(await readFile(join(rulesDir(dataDir), ACTIVE_FILE), 'utf8')) as { pack?: unknown };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new DamagedPackError(
      `${join(rulesDir(dataDir), ACTIVE_FILE)} cannot be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (typeof pointer.pack !== 'string' || !/^[0-9a-f]{12}-\d+$/.test(pointer.pack))
    throw new DamagedPackError(`${join(rulesDir(dataDir), ACTIVE_FILE)} names no pack`);
  return readPack(join(rulesDir(dataDir), PACKS_DIR, pointer.pack));
}

/**
 * The active pack of one data directory, re-read only when active.json changed (its mtime and size),
 * so a check costs one stat. Null when none is installed; rejects with DamagedPackError.
 */
export function createPackReader(dataDir: string): () => Promise<ActivePack | null> {
  let cached: { key: string; pack: Promise<ActivePack | null> } | undefined;
  return async () => {
    let key = 'none';
    try {
      const s = await stat(join(rulesDir(dataDir), ACTIVE_FILE));
      key = `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (cached?.key !== key) {
      const pack = readActivePack(dataDir);
      // A damaged pack is read again next time (it may have been reinstalled meanwhile).
      pack.catch(() => {
        if (cached?.pack === pack) cached = undefined;
      });
      cached = { key, pack };
    }
    return cached.pack;
  };
}
