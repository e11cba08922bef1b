/**
 * How the service runs work outside its own thread with a memory and a CPU ceiling, so that a hostile
 * or merely huge input costs the request that brought it and nothing else (docs/operations.md
 * "Ceilings of child processes and threads" lists them all).
 *
 * Child processes (qpdf, Ghostscript) start through util-linux's `prlimit` (Debian's util-linux is an
 * essential package, in every image): it sets the kernel's limits on itself and then execs the program
 * in the same process, so the limits are the program's own and hold even when this process dies before
 * its deadline timer fires, and our timer's SIGKILL reaches the program itself.
 * - RLIMIT_AS (address space): past it an allocation fails. The program says so in its own words
 *   (qpdf: `std::bad_alloc`, which it may treat as damage and carry on with; Ghostscript: `VMerror`),
 *   so its stderr is read for them whatever its exit status.
 * - RLIMIT_CPU: SIGXCPU at the ceiling (neither program handles it, so it ends them); SIGKILL a second
 *   later should one survive it, which then reads as any other signal.
 * - RLIMIT_FSIZE (optional, for a program that writes files, as `pdfsig -dump`): SIGXFSZ when a file it
 *   writes would grow past the ceiling.
 *
 * Threads (`worker_threads`) get V8's heap limit through `threadResourceLimits`; past it Node ends the
 * thread with ERR_WORKER_OUT_OF_MEMORY (`isThreadOutOfMemory`), and the process lives on.
 */
import { execFile } from 'node:child_process';
import { Worker } from 'node:worker_threads';

/** What one program may use. */
export interface ChildCeiling {
  /** Address space, bytes (RLIMIT_AS). */
  readonly memoryBytes: number;
  /** CPU time, whole seconds (RLIMIT_CPU). */
  readonly cpuSeconds: number;
  /** Largest file the program may write, bytes (RLIMIT_FSIZE); unset, no ceiling. */
  readonly fileBytes?: number;
  /** The program's words on stderr for an allocation that failed. */
  readonly outOfMemory: RegExp;
}

export interface LimitedRunOptions {
  readonly cwd: string;
  /** Wall-clock deadline; past it the program gets SIGKILL. */
  readonly timeoutMs: number;
  /** Most bytes of stdout (and of stderr) kept; a program that prints more is stopped. */
  readonly maxBuffer: number;
  readonly ceiling: ChildCeiling;
}

/** How a run ended. `ceiling` wins over the exit status: a program may exit 0 after a failed allocation it shrugged off. */
export type LimitedRun =
  | { readonly ended: 'exit'; readonly exitCode: number; readonly stdout: string; readonly stderr: string }
  | { readonly ended: 'ceiling'; readonly ceiling: 'memory' | 'cpu' | 'file'; readonly stderr: string }
  | { readonly ended: 'timeout'; readonly stderr: string }
  | { readonly ended: 'signal'; readonly signal: string; readonly stderr: string }
  /** The program (or prlimit) is not installed. */
  | { readonly ended: 'missing'; readonly program: string }
  /** Anything else that kept it from running or finishing (stdout past maxBuffer, a spawn error). */
  | { readonly ended: 'failed'; readonly error: Error; readonly stderr: string };

const PRLIMIT = 'prlimit';
/** prlimit's exit status when it could not exec the program (util-linux's EX_EXEC_ENOENT). */
const EXEC_NOT_FOUND = 127;

/** The `prlimit` command line that runs `program args` under `ceiling`: soft CPU limit at the ceiling, hard one a second later. */
export function limitedCommand(program: string, args: readonly string[], ceiling: ChildCeiling): [string, string[]] {
  const cpu = Math.max(1, Math.ceil(ceiling.cpuSeconds));
  const file = ceiling.fileBytes === undefined ? [] : [`--fsize=${Math.floor(ceiling.fileBytes)}`];
  return [
    PRLIMIT,
    [`--as=${Math.floor(ceiling.memoryBytes)}`, `--cpu=${cpu}:${cpu + 1}`, ...file, '--', program, ...args],
  ];
}

/** Runs `program args` in `cwd` under its ceiling and deadline; never rejects: every ending is a `LimitedRun`. */
export function runLimited(program: string, args: readonly string[], options: LimitedRunOptions): Promise<LimitedRun> {
  const [file, limitedArgs] = limitedCommand(program, args, options.ceiling);
  return new Promise((resolve) => {
    execFile(
      file,
      limitedArgs,
      { cwd: options.cwd, timeout: options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: options.maxBuffer },
      (error, stdout, stderr) => {
        if (options.ceiling.outOfMemory.test(stderr)) return resolve({ ended: 'ceiling', ceiling: 'memory', stderr });
        if (!error) return resolve({ ended: 'exit', exitCode: 0, stdout, stderr });
        const failure = error as Error & {
          code?: number | string | null;
          killed?: boolean;
          signal?: NodeJS.Signals | null;
        };
        if (failure.code === 'ENOENT') return resolve({ ended: 'missing', program: PRLIMIT });
        if (failure.code === EXEC_NOT_FOUND && stderr.startsWith(`${PRLIMIT}: failed to execute`))
          return resolve({ ended: 'missing', program });
        // A string code (stdout past maxBuffer, a spawn error) is ours to report, even when Node then killed the program.
        if (typeof failure.code === 'string') return resolve({ ended: 'failed', error: failure, stderr });
        if (failure.killed) return resolve({ ended: 'timeout', stderr });
        if (failure.signal === 'SIGXCPU') return resolve({ ended: 'ceiling', ceiling: 'cpu', stderr });
        if (failure.signal === 'SIGXFSZ') return resolve({ ended: 'ceiling', ceiling: 'file', stderr });
        if (failure.signal) return resolve({ ended: 'signal', signal: failure.signal, stderr });
        if (typeof failure.code === 'number') return resolve({ ended: 'exit', exitCode: failure.code, stdout, stderr });
        resolve({ ended: 'failed', error: failure, stderr });
      },
    );
  });
}

/** `resourceLimits` for a thread whose heap may grow to `heapMb` (the old generation, where nearly all of it lives). */
export function threadResourceLimits(heapMb: number): { maxOldGenerationSizeMb: number } {
  return { maxOldGenerationSizeMb: heapMb };
}

/**
 * Starts the worker module `worker` (a file name without extension, beside the module at `callerUrl`)
 * on a thread whose heap may grow to `heapMb`: the compiled .js, or from source (vitest, tsx) the .ts
 * through tsx's loader, which a thread does not inherit, so a two-line bootstrap registers it first.
 */
export function startThread(
  callerUrl: string,
  worker: string,
  options: { name: string; heapMb: number; workerData?: unknown },
): Worker {
  const settings = {
    resourceLimits: threadResourceLimits(options.heapMb),
    name: options.name,
    ...(options.workerData === undefined ? {} : { workerData: options.workerData }),
  };
  if (callerUrl.endsWith('.ts')) {
    const source = new URL(`./${worker}.ts`, callerUrl).href;
    const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
    return new Worker(bootstrap, { eval: true, ...settings });
  }
  return new Worker(new URL(`./${worker}.js`, callerUrl), settings);
}

/** True for the error Node ends a thread with when its heap reached its limit. */
export function isThreadOutOfMemory(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}
