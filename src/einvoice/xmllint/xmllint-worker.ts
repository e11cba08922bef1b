/**
 * An xmllint thread (a `worker_threads` thread of xmllint-pool.ts): runs libxml2's xmllint, as
 * xmllint-wasm packages it, once per task, on a fresh WebAssembly instance of a module compiled once.
 *
 * xmllint-wasm's `xmllint-node.js` is an Emscripten MODULARIZE build: its export is a factory, and
 * every call of it is a runtime of its own (its in-memory file system, libxml2's globals, the wasm
 * memory) that runs `main` once and exits. Its `instantiateWasm` hook lets the caller instantiate the
 * wasm, so each task instantiates the `WebAssembly.Module` this thread received (compiled once, on the
 * main thread) instead of reading and compiling `xmllint.wasm` again, and nothing of one check is left
 * for the next: the old instance, its memory and its files are garbage once the task answers. (Loading
 * that file also registers the library's own message listener on this thread; it answers only messages
 * tagged `xmllint-wasm`, which this pool never sends.)
 *
 * In: `{ id, inputFiles, args, initialMemoryPages, maxMemoryPages }`. Out: `{ id, exitCode, stdout,
 * stderr }`, as the library's own worker reports them (an abort is exit code −1 with `WASM Abort: …`
 * on stderr), or `{ id, error }` when the runtime itself failed.
 */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { announceReady } from '../../shared/task-threads.js';
import { wasm, type WasmImports, type WasmInstance, type WasmMemory, type WasmModule } from './wasm.js';

export interface XmllintTask {
  readonly id: number;
  /** Written to the runtime's file system before `main` runs (documents, schemas, their imports). */
  readonly inputFiles: readonly { fileName: string; contents: string }[];
  /** xmllint's command line, without the program name. */
  readonly args: readonly string[];
  readonly initialMemoryPages: number;
  /** The wasm memory's maximum, in 64 KiB pages: libxml2's allocations fail past it. */
  readonly maxMemoryPages: number;
}

export type XmllintAnswer =
  | { readonly id: number; readonly exitCode: number; readonly stdout: string; readonly stderr: string }
  | { readonly id: number; readonly error: string };

export interface XmllintWorkerData {
  /** xmllint.wasm, compiled once by the pool and shared by its threads. */
  readonly module: WasmModule;
}

/** The part of Emscripten's module object this thread sets (xmllint-wasm 5.x, Emscripten 4). */
interface EmscriptenOptions {
  inputFiles: readonly { fileName: string; contents: string }[];
  arguments: string[];
  thisProgram: string;
  wasmMemory: WasmMemory;
  print(text: string): void;
  printErr(text: string): void;
  onExit(code: number): void;
  onAbort(reason: unknown): void;
  instantiateWasm(imports: WasmImports, receive: (instance: WasmInstance) => void): object;
}
type XmllintFactory = (options: EmscriptenOptions) => Promise<unknown>;

const createXmllint = createRequire(import.meta.url)('xmllint-wasm/xmllint-node.js') as XmllintFactory;
const { module } = workerData as XmllintWorkerData;

function run(task: XmllintTask): Promise<XmllintAnswer> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let answered = false;
    const answer = (result: XmllintAnswer) => {
      if (answered) return;
      answered = true;
      resolve(result);
    };
    const failed = (error: unknown) =>
      answer({ id: task.id, error: error instanceof Error ? error.message : String(error) });
    createXmllint({
      inputFiles: task.inputFiles,
      arguments: [...task.args],
      thisProgram: 'xmllint',
      wasmMemory: new wasm.Memory({ initial: task.initialMemoryPages, maximum: task.maxMemoryPages }),
      print: (text) => {
        stdout += `${text}\n`;
      },
      printErr: (text) => {
        stderr += `${text}\n`;
      },
      onExit: (exitCode) => answer({ id: task.id, exitCode, stdout, stderr }),
      onAbort: (reason) => answer({ id: task.id, exitCode: -1, stdout: '', stderr: `WASM Abort: ${String(reason)}` }),
      instantiateWasm: (imports, receive) => {
        // The runtime waits for `receive`; a failure here must answer, or the task would never end.
        wasm.instantiate(module, imports).then(receive, failed);
        return {};
      },
    }).then(
      // `main` ran to its exit before the factory's promise settles; this is only a guard.
      () => failed(new Error('xmllint ended without an exit code')),
      failed,
    );
  });
}

parentPort?.on('message', (task: XmllintTask) => {
  // The library's own listener hears every message too; this one hears only tasks.
  if (typeof task?.id !== 'number' || !Array.isArray(task.args)) return;
  void run(task).then((answer) => parentPort!.postMessage(answer));
});
announceReady();
