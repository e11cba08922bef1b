/**
 * The few WebAssembly APIs the xmllint pool uses (xmllint-pool.ts, xmllint-worker.ts), typed here:
 * the project compiles against ES2023 without the DOM library, which is where TypeScript declares
 * `WebAssembly`, and @types/node does not.
 */
declare const compiledModule: unique symbol;
declare const instanceOf: unique symbol;
declare const memoryOf: unique symbol;

/** A compiled `WebAssembly.Module` (structured-cloneable: it may be posted to a worker thread). */
export interface WasmModule {
  readonly [compiledModule]: true;
}
export interface WasmInstance {
  readonly [instanceOf]: true;
}
export interface WasmMemory {
  readonly [memoryOf]: true;
}
/** Import objects by module name, then by field name. */
export type WasmImports = Record<string, Record<string, unknown>>;

interface WebAssemblyApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  instantiate(module: WasmModule, imports: WasmImports): Promise<WasmInstance>;
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
}

export const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
