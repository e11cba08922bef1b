/**
 * File names that will sit side by side — a batch's zip, a split's zip, the files `pressroom generate`
 * writes into one folder — are unique case-insensitively, after every rename (issue 49): macOS and
 * Windows keep `Report.pdf` and `report.pdf` as one file, and every unzip tool overwrites one entry
 * with another of the same name. The one rule, used by the service (batch-assembly.ts,
 * pdf-tools/zip-parts.ts) and by the command line (batch-cli/), like csv-cells.ts. Pure: no imports.
 */

/** What two names clash on: the same letters in any case. */
export function nameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/** `name` with `-<tag>` before its extension: `a.pdf` → `a-3.pdf`. */
function tagged(name: string, tag: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}-${tag}${name.slice(dot)}` : `${name}-${tag}`;
}

/**
 * Unique names for `files`, in order: the first file of a name keeps it (in whatever case it came), and
 * every later one becomes `<name>-<tag>` (its tag: a row or part number), then `<name>-<tag>-2`, `-3`…
 * while that is taken too, by an earlier file or by one of the names that come later.
 */
export function uniqueNames(files: readonly { name: string; tag: string | number }[]): string[] {
  const taken = new Set<string>();
  const names = files.map(({ name }) => {
    const key = nameKey(name);
    if (taken.has(key)) return undefined;
    taken.add(key);
    return name;
  });
  return names.map((kept, i) => {
    if (kept !== undefined) return kept;
    const { name, tag } = files[i]!;
    let candidate = tagged(name, String(tag));
    for (let n = 2; taken.has(nameKey(candidate)); n++) candidate = tagged(name, `${tag}-${n}`);
    taken.add(nameKey(candidate));
    return candidate;
  });
}
