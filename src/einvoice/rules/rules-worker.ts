/**
 * A validation thread (rules-pool.ts): runs the pack's compiled schematrons (SEF) on an XML with
 * SaxonJS. Each SEF is read, checked against the SHA-256 its pack recorded, and parsed once per thread,
 * then kept (a new pack's files have other paths, and the two most recent packs' are kept at most).
 * The XML is parsed once per check and given to every stylesheet of the check.
 *
 * SaxonJS's parser reads no DTD: an entity other than the five predefined ones is an error, never
 * expanded or fetched; XInclude is not processed (an `xi:include` is an element like any other); the
 * stylesheets read no document but the one they are given.
 *
 * In: `{ id, xml, stylesheets: [{path, sha256}] }`. Out: `{ id, results }` (one list of SVRL entries
 * per stylesheet, in order), or `{ id, error, reason }`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { announceReady } from '../../shared/task-threads.js';
import { parseForRules, runSchematron, type SvrlEntry } from './svrl.js';

export interface RulesTask {
  readonly id: number;
  readonly xml: string;
  readonly stylesheets: readonly { readonly path: string; readonly sha256: string }[];
}

export type RulesAnswer =
  | { readonly id: number; readonly results: SvrlEntry[][] }
  /** `unparsable`: the XML; `pack`: a stylesheet missing or changed; `failed`: the stylesheet stopped on this XML. */
  | { readonly id: number; readonly error: string; readonly reason: 'unparsable' | 'pack' | 'failed' };

/** SEFs kept per thread: two packs' four (the previous pack stays while checks that began on it finish). */
const MAX_LOADED = 8;
const loaded = new Map<string, unknown>();

class PackFileError extends Error {}

function stylesheet(path: string, sha256: string): unknown {
  const key = `${path}\n${sha256}`;
  const found = loaded.get(key);
  if (found) return found;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new PackFileError(`${path} cannot be read (${(error as Error).message})`);
  }
  if (createHash('sha256').update(bytes).digest('hex') !== sha256)
    throw new PackFileError(`${path} changed since the pack was installed`);
  const sef = JSON.parse(bytes.toString('utf8')) as unknown;
  loaded.set(key, sef);
  while (loaded.size > MAX_LOADED) loaded.delete(loaded.keys().next().value!);
  return sef;
}

function run(task: RulesTask): RulesAnswer {
  let sefs: unknown[];
  try {
    sefs = task.stylesheets.map((s) => stylesheet(s.path, s.sha256));
  } catch (error) {
    return { id: task.id, error: (error as Error).message, reason: error instanceof PackFileError ? 'pack' : 'failed' };
  }
  let document: unknown;
  try {
    document = parseForRules(task.xml);
  } catch (error) {
    return { id: task.id, error: (error as Error).message, reason: 'unparsable' };
  }
  try {
    return {
      id: task.id,
      results: sefs.map((sef) => runSchematron(sef, document)),
    };
  } catch (error) {
    return { id: task.id, error: (error as Error).message, reason: 'failed' };
  }
}

parentPort?.on('message', (task: RulesTask) => {
  parentPort!.postMessage(run(task));
});
announceReady();
