/**
 * Runs a page's shell blocks as a reader runs them (issue 50): in order, in one bash, so variables, the
 * working directory and files carry from block to block, under `set -euo pipefail` (and
 * inherit_errexit), against a running service. What differs from a reader's terminal, and why:
 *
 * - `localhost:8080` in a block is rewritten to the service the harness started for the page (its own
 *   port, its own data directory), so pages never share a service or fight over port 8080.
 * - The shell has the service's settings in its environment (`PRESSROOM_DATA_DIR`, the secret key, the
 *   admin token…), as a reader's shell in the checkout has `./data`: `node bin/pressroom.js accounts
 *   create` writes to the database the service reads.
 * - It runs in a fresh directory whose entries are links to the checkout's (`bin`, `examples`, …, and
 *   `../shared` beside it), so `node bin/pressroom.js` works and the files a page makes land there,
 *   not in the repository. HOME is a fresh directory too (the compile cache stays `~/.cache`).
 * - `curl` fails on an answer of 400 or more (`--fail-with-body` is added to a curl that chose none of
 *   `-f`, `--fail-with-body`, `-w`): a refusal a reader would see as a failure fails the block.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DocBlock } from './doc-pages.js';

/** A block to run, and whether it belongs to the page or to the pages it starts from. */
export interface ScheduledBlock {
  block: DocBlock;
  prelude: boolean;
}

export interface PageRunOptions {
  root: string;
  blocks: ScheduledBlock[];
  /** `127.0.0.1:<port>`: what `localhost:8080` becomes. */
  host: string;
  env: Record<string, string>;
  deadlineMs: number;
}

/** What happened: a failure in a reader's words, or none; and what each block that ran printed. */
export interface PageRunResult {
  failure?: string;
  outputs: Array<{ block: DocBlock; output: string }>;
}

const OUTPUT_SHOWN = 6000;

const DRIVER_HEAD = `set -euo pipefail
shopt -s inherit_errexit
exec 3>>"$DOCS_STATUS"
trap 'echo "fail $? $LINENO" >&3' ERR
curl() {
  local arg add=--fail-with-body rc=0
  for arg in "$@"; do
    case "$arg" in
      --fail|--fail-with-body|-w|--write-out) add= ;;
      --*) ;;
      -*f*) add= ;;
    esac
  done
  # "|| rc=": the failure is the caller's line, where the ERR trap reports it (not this function's).
  command curl \${add:+"$add"} "$@" || rc=$?
  return "$rc"
}
`;

/** Runs the blocks; resolves when the shell ends (or is ended at the deadline). */
export async function runPageBlocks(options: PageRunOptions): Promise<PageRunResult> {
  const base = mkdtempSync(join(tmpdir(), 'pressroom-docs-'));
  try {
    const work = shadowCheckout(options.root, base);
    const dir = join(base, 'blocks');
    mkdirSync(dir);
    mkdirSync(join(base, 'home'));
    const status = join(dir, 'status');
    writeFileSync(status, '');
    const driver = [DRIVER_HEAD];
    options.blocks.forEach(({ block }, i) => {
      const id = String(i).padStart(3, '0');
      if (block.kind === 'file') {
        writeFileSync(join(dir, `${id}.file`), block.text);
        driver.push(
          `echo "start ${id}" >&3; cp "$DOCS_BLOCKS/${id}.file" ${shellQuote(block.file!)}; echo "end ${id}" >&3`,
        );
        return;
      }
      writeFileSync(join(dir, `${id}.sh`), (block.instead ?? block.text).replaceAll('localhost:8080', options.host));
      driver.push(
        `echo "start ${id}" >&3; source "$DOCS_BLOCKS/${id}.sh" >"$DOCS_BLOCKS/${id}.out" 2>&1; echo "end ${id}" >&3`,
      );
    });
    writeFileSync(join(dir, 'driver.sh'), `${driver.join('\n')}\n`);
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: join(base, 'home'),
      XDG_CACHE_HOME: process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
      LANG: 'C.UTF-8',
      ...options.env,
      DOCS_STATUS: status,
      DOCS_BLOCKS: dir,
    };
    const { code, timedOut, stderr } = await runShell(join(dir, 'driver.sh'), work, env, options.deadlineMs);
    const outputs = options.blocks.flatMap(({ block }, i) => {
      const out = join(dir, `${String(i).padStart(3, '0')}.out`);
      return existsSync(out) ? [{ block, output: readFileSync(out, 'utf8') }] : [];
    });
    if (code === 0 && !timedOut) return { outputs };
    return { failure: describeFailure({ options, dir, status, timedOut, code, stderr }), outputs };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

/** A directory of links to the checkout's entries (not its data or .git), with `../shared` beside it. */
function shadowCheckout(root: string, base: string): string {
  const work = join(base, 'work');
  mkdirSync(work);
  for (const entry of readdirSync(root)) {
    if (entry === '.git' || entry === 'data') continue;
    symlinkSync(join(root, entry), join(work, entry));
  }
  const shared = resolve(root, '..', 'shared');
  if (existsSync(shared)) symlinkSync(shared, join(base, 'shared'));
  return work;
}

/** Runs `bash driver` in its own process group; at the deadline, or once it ends, the group is ended. */
function runShell(
  driver: string,
  cwd: string,
  env: Record<string, string>,
  deadlineMs: number,
): Promise<{ code: number | null; timedOut: boolean; stderr: string }> {
  return new Promise((done) => {
    const child = spawn('bash', [driver], { cwd, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let timedOut = false;
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
    const endGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      endGroup();
    }, deadlineMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      endGroup(); // whatever a block left running in the background (`&`)
      done({ code, timedOut, stderr });
    });
  });
}

function describeFailure(input: {
  options: PageRunOptions;
  dir: string;
  status: string;
  timedOut: boolean;
  code: number | null;
  stderr: string;
}): string {
  const { options, dir } = input;
  const events = readFileSync(input.status, 'utf8').split('\n').filter(Boolean);
  const started = events.filter((e) => e.startsWith('start ')).map((e) => Number(e.slice(6)));
  const last = started.at(-1);
  if (last === undefined) return `the shell did not start a block (exit ${input.code}): ${input.stderr}`;
  const { block, prelude } = options.blocks[last]!;
  const failed = events.map((e) => /^fail (\d+) (\d+)$/.exec(e)).find(Boolean);
  const id = String(last).padStart(3, '0');
  const output = existsSync(join(dir, `${id}.out`)) ? readFileSync(join(dir, `${id}.out`), 'utf8') : '';
  // bash's own errors (an unset variable under set -u) end the shell without the ERR trap; they name the line.
  const named = new RegExp(`${id}\\.sh: line (\\d+):`).exec(output);
  const lineInBlock = failed ? Number(failed[2]) : named ? Number(named[1]) : undefined;
  const where = `${block.page}, the block at line ${block.line}${prelude ? ' (run first: the page starts from it)' : ''}`;
  const command = lineInBlock !== undefined ? (block.instead ?? block.text).split('\n')[lineInBlock - 1] : undefined;
  const passed = options.blocks
    .slice(0, last)
    .filter((b) => !b.prelude)
    .map((b) => b.block.line);
  return [
    input.timedOut
      ? `${where} did not finish within ${Math.round(options.deadlineMs / 1000)} s`
      : `${where} failed (exit ${failed?.[1] ?? input.code})${lineInBlock !== undefined ? ` in the command that ends at line ${block.line + lineInBlock}: ${command?.trim()}` : ''}`,
    block.instead ? `(the docs test ran instead: ${block.instead})` : '',
    `its output${output.length > OUTPUT_SHOWN ? ' (the end)' : ''}:`,
    output.slice(-OUTPUT_SHOWN) || '(none)',
    input.stderr ? `the shell: ${input.stderr}` : '',
    `blocks of ${block.page} that ran before it: ${passed.length > 0 ? passed.map((l) => `line ${l}`).join(', ') : 'none'}`,
  ]
    .filter(Boolean)
    .join('\n');
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
