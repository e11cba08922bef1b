/** The parts of nunjucks-slim the runtime uses (it ships no types for its browser build). */

export interface NunjucksEnvironment {
  addFilter(name: string, fn: (...args: any[]) => unknown): void;
  addGlobal(name: string, value: unknown): void;
  addTest?(name: string, fn: (...args: any[]) => boolean): void;
  filters: Record<string, unknown>;
  tests: Record<string, unknown>;
  globals: Record<string, unknown>;
}

export interface NunjucksTemplate {
  render(context: unknown): unknown;
}

export interface Nunjucks {
  installJinjaCompat(): void;
  lib: { extend: unknown; _assign: unknown };
  Environment: new (loaders: unknown[], options: Record<string, unknown>) => NunjucksEnvironment;
  Template: new (
    source: { type: 'code'; obj: unknown },
    env: NunjucksEnvironment,
    name: string,
    eager: boolean,
  ) => NunjucksTemplate;
  runtime: { markSafe(value: string): unknown; SafeString: new (value: string) => unknown };
}
