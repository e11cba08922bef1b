/** The value after `name` on the bench script's command line (`--n 5`), or `fallback`. */
export function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}
