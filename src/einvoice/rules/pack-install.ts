/**
 * `pressroom einvoice rules install` and `status` (issue 41). Installing, in order:
 *   1. every pinned file gathered (a local copy, or downloaded) and its SHA-256 checked: one difference
 *      and nothing is written (pack-sources.ts);
 *   2. a staging directory under the data directory gets the verified sources;
 *   3. the stylesheets are compiled (pack-build.ts), or copied from the compile cache when the same
 *      inputs were compiled before by the same compiler (their hashes checked again);
 *   4. pack.json is written, the staging directory renamed into packs/, and active.json replaced by
 *      rename: the pack becomes active in one step, and a failure before it leaves the old one active.
 * The compile cache (`~/.cache/pressroom/einvoice-rules/<key>`, or `$XDG_CACHE_HOME`) is outside the
 * data directory and the checkout: reinstalls, test data directories and CI reruns skip the minute or
 * two of compiling. Its key is the SHA-256 of the pinned inputs' hashes and the compiler's version.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { PACK_FILES, RULE_SET_NAMES, SOURCES } from './manifest.js';
import { COMPILER, compilePack, sefName, STYLESHEETS, XSLT3_VERSION, type StylesheetId } from './pack-build.js';
import { gatherSources, sha256Of, type SourceOrigin } from './pack-sources.js';
import {
  ACTIVE_FILE,
  COMPILED_DIR,
  DamagedPackError,
  PACK_FILE,
  PACKS_DIR,
  readActivePack,
  rulesDir,
  SOURCE_DIR,
  type ActivePack,
  type PackDescription,
} from './pack-store.js';

/** Bumped when the build changes what it makes from the same inputs: old cache entries are then not used. */
const BUILD_RECIPE = 3; // 2, 3: context-free tests lifted, `//name` keyed (pack-lift.ts: bump with each change there)

/** The compile cache's directory: `$XDG_CACHE_HOME/pressroom/einvoice-rules`, else `~/.cache/…`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME?.trim() || join(homedir(), '.cache');
  return join(base, 'pressroom', 'einvoice-rules');
}

/** The pack's id: what it is built from and with. */
export function packId(published = false): string {
  return sha256Of(
    Buffer.from(
      JSON.stringify({
        recipe: BUILD_RECIPE,
        ...(published ? { published } : {}),
        compiler: `xslt3 ${XSLT3_VERSION}`,
        files: PACK_FILES.map((f) => `${f.source}:${f.path}:${f.sha256}`),
      }),
    ),
  );
}

export interface InstallOptions {
  dataDir: string;
  origin: SourceOrigin;
  /** The compile cache; null: compile, and keep nothing outside the data directory. */
  cacheDir: string | null;
  /** Progress, one line at a time (the CLI prints it on stderr). */
  log?: (line: string) => void;
  /**
   * The stylesheets exactly as published, nothing lifted (pack-lift.ts): the reference the tests and the
   * bench compare the pack with. Not offered to operators: its time grows with the square of the lines.
   */
  published?: boolean;
}

type Compiled = PackDescription['compiled'];

/** Copies a cached compile into `outDir` when every SEF is there with its recorded hash; null otherwise (then it is compiled). */
async function fromCache(cacheDir: string, id: string, outDir: string): Promise<Compiled | null> {
  let recorded: Compiled;
  try {
    recorded = JSON.parse(await readFile(join(cacheDir, id, 'compiled.json'), 'utf8')) as Compiled;
  } catch {
    return null;
  }
  await mkdir(outDir, { recursive: true });
  for (const stylesheet of STYLESHEETS) {
    const entry = recorded[stylesheet];
    if (!entry) return null;
    const bytes = await readFile(join(cacheDir, id, entry.file)).catch(() => undefined);
    if (!bytes || sha256Of(bytes) !== entry.sha256) return null;
    await writeFile(join(outDir, entry.file), bytes);
  }
  return recorded;
}

/** Records a fresh compile in the cache (best effort: a read-only home only costs the next install its compile). */
async function toCache(
  cacheDir: string,
  id: string,
  outDir: string,
  compiled: Compiled,
  log: (line: string) => void,
): Promise<void> {
  const temporary = join(cacheDir, `.tmp-${randomBytes(6).toString('hex')}`);
  try {
    await mkdir(temporary, { recursive: true });
    for (const stylesheet of STYLESHEETS)
      await copyFile(join(outDir, compiled[stylesheet].file), join(temporary, compiled[stylesheet].file));
    await writeFile(join(temporary, 'compiled.json'), JSON.stringify(compiled, null, 2));
    await rm(join(cacheDir, id), { recursive: true, force: true });
    await rename(temporary, join(cacheDir, id));
  } catch (error) {
    log(
      `note: the compiled stylesheets were not cached in ${cacheDir} (${error instanceof Error ? error.message : String(error)})`,
    );
    await rm(temporary, { recursive: true, force: true }).catch(() => {});
  }
}

/** Each compiled stylesheet's file, hash and size. */
async function describeCompiled(outDir: string): Promise<Compiled> {
  const entries = await Promise.all(
    STYLESHEETS.map(async (id) => {
      const bytes = await readFile(join(outDir, sefName(id)));
      return [id, { file: sefName(id), sha256: sha256Of(bytes), bytes: bytes.length }] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<StylesheetId, Compiled[StylesheetId]>;
}

/** Installs the pack and makes it active; returns its description. Throws RulesPackError, having changed nothing. */
export async function installRulesPack(options: InstallOptions): Promise<PackDescription> {
  const log = options.log ?? (() => {});
  const sources = await gatherSources(options.origin, log);
  log(`verified ${sources.length} files against their pinned SHA-256`);
  const id = packId(options.published);
  const root = rulesDir(options.dataDir);
  await mkdir(join(root, PACKS_DIR), { recursive: true, mode: 0o700 });
  const staging = join(root, `.staging-${randomBytes(6).toString('hex')}`);
  try {
    for (const source of sources) {
      const path = join(staging, SOURCE_DIR, source.path);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, source.bytes);
    }
    const outDir = join(staging, COMPILED_DIR);
    let compiled = options.cacheDir ? await fromCache(options.cacheDir, id, outDir) : null;
    if (compiled) {
      log(`compiled stylesheets taken from the cache (${join(options.cacheDir!, id)})`);
    } else {
      log('compiling the stylesheets (a minute or two; once per pack version)');
      await compilePack(
        { sourceDir: join(staging, SOURCE_DIR), workDir: join(staging, 'build'), outDir, published: options.published },
        log,
      );
      compiled = await describeCompiled(outDir);
      if (options.cacheDir) await toCache(options.cacheDir, id, outDir, compiled, log);
    }
    await rm(join(staging, 'build'), { recursive: true, force: true });
    const description: PackDescription = {
      format: 1,
      id,
      installed_at: new Date().toISOString(),
      rule_sets: { ...RULE_SET_NAMES },
      compiler: COMPILER,
      sources: Object.values(SOURCES).map((s) => ({
        ...s,
        url: `https://github.com/${s.repository}/tree/${s.commit}`,
      })),
      files: sources.map((s) => ({ path: s.path, sha256: s.sha256 })),
      compiled,
    };
    await writeFile(join(staging, PACK_FILE), `${JSON.stringify(description, null, 2)}\n`);
    const name = `${id.slice(0, 12)}-${Date.now()}`;
    await rename(staging, join(root, PACKS_DIR, name));
    const pointer = join(root, `${ACTIVE_FILE}.${randomBytes(6).toString('hex')}.tmp`);
    await writeFile(pointer, `${JSON.stringify({ pack: name })}\n`);
    await rename(pointer, join(root, ACTIVE_FILE));
    log(`installed and active: ${description.rule_sets.en16931} + ${description.rule_sets.xrechnung} (pack ${name})`);
    await removeOldPacks(root, name);
    return description;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Removes the packs before the previous one: a check that started on the previous pack may still be reading it. */
async function removeOldPacks(root: string, active: string): Promise<void> {
  const names = (await readdir(join(root, PACKS_DIR)))
    .filter((n) => n !== active)
    .sort((a, b) => Number(b.split('-')[1]) - Number(a.split('-')[1]));
  for (const old of names.slice(1)) await rm(join(root, PACKS_DIR, old), { recursive: true, force: true });
}

/** What `rules status` prints. */
export interface RulesStatus {
  installed: boolean;
  /** The directory of the active pack. */
  pack?: string;
  id?: string;
  installed_at?: string;
  rule_sets?: PackDescription['rule_sets'];
  compiler?: string;
  sources?: { name: string; version: string; repository: string; commit: string; licence: string }[];
  /** Every file re-hashed against pack.json: `ok`, or what differs. */
  verified?: 'ok' | string[];
  /** Why the active pack cannot be used. */
  damaged?: string;
}

/** The active pack, with every one of its files hashed again. */
export async function rulesPackStatus(dataDir: string): Promise<RulesStatus> {
  let pack: ActivePack | null;
  try {
    pack = await readActivePack(dataDir);
  } catch (error) {
    if (error instanceof DamagedPackError) return { installed: true, damaged: error.message };
    throw error;
  }
  if (!pack) return { installed: false };
  const { description: d, dir } = pack;
  const problems: string[] = [];
  const check = async (path: string, sha256: string) => {
    const bytes = await readFile(join(dir, path)).catch(() => undefined);
    if (!bytes) problems.push(`${path}: missing`);
    else if (sha256Of(bytes) !== sha256) problems.push(`${path}: changed since it was installed`);
  };
  for (const file of d.files) await check(join(SOURCE_DIR, file.path), file.sha256);
  for (const id of STYLESHEETS) await check(join(COMPILED_DIR, d.compiled[id].file), d.compiled[id].sha256);
  return {
    installed: true,
    pack: dir,
    id: d.id,
    installed_at: d.installed_at,
    rule_sets: d.rule_sets,
    compiler: d.compiler,
    sources: d.sources.map(({ name, version, repository, commit, licence }) => ({
      name,
      version,
      repository,
      commit,
      licence,
    })),
    verified: problems.length === 0 ? 'ok' : problems,
  };
}
