/**
 * The asset names a template's text names (issue 50): what a published version pins, and what the
 * asset library shows as "used by". Read from the parse tree (the one compiler.ts makes, never run):
 *   - `asset('logo.png')` (a string literal) names `logo.png`;
 *   - any other use of `asset` — a computed name (`asset(data.logo)`, `asset('logos/' ~ brand)`), the
 *     function handed around, a part that does not parse — or an asset URL written out
 *     (`https://assets.pressroom.internal/a/…`) means the template may name any asset: `computed`.
 * Computed is the safe answer: a version that may name any asset pins all of them.
 */

/**
 * Distinct names a template is read as naming one by one; past it, it counts as `computed` (pins
 * every asset): a template of 100,000 `asset('x1')`… calls would otherwise write as many rows.
 */
export const MAX_NAMED_ASSETS = 200;

/** Longest name taken from a literal: the asset library's own bound (assets.ts). */
const MAX_NAME_CHARS = 200;

/** Where a written-out asset URL starts (closed-room.ts ASSET_ORIGIN, without the scheme). */
const ASSET_HOST = 'assets.pressroom.internal';

export interface TemplateAssetNames {
  /** Names given as literals, sorted. */
  names: string[];
  /** True when the template may name assets the list does not show. */
  computed: boolean;
}

export const NO_ASSET_NAMES: TemplateAssetNames = Object.freeze({ names: [], computed: false }) as TemplateAssetNames;

/** A node of the parse tree, as far as this walk reads it (compiler.ts TemplateNode). */
interface TreeNode {
  typename: string;
  fields?: string[];
  [field: string]: unknown;
}

/** False when `source` cannot name an asset at all (no `asset`, no asset URL): no tree to read. */
export function mayNameAssets(source: string): boolean {
  return source.includes('asset');
}

/** The names `tree` (the parse of `source`) names. */
export function assetNamesInTree(tree: unknown, source: string): TemplateAssetNames {
  if (source.includes(ASSET_HOST)) return { names: [], computed: true };
  const names = new Set<string>();
  if (!literalNamesOnly(tree as TreeNode, names) || names.size > MAX_NAMED_ASSETS) return { names: [], computed: true };
  return { names: [...names].sort(), computed: false };
}

/** The names of several parts (html, css, header, footer) together. */
export function mergeAssetNames(parts: readonly TemplateAssetNames[]): TemplateAssetNames {
  if (parts.some((part) => part.computed)) return { names: [], computed: true };
  const names = [...new Set(parts.flatMap((part) => part.names))].sort();
  return names.length > MAX_NAMED_ASSETS ? { names: [], computed: true } : { names, computed: false };
}

/** Adds the literal names of `tree`'s `asset()` calls to `names`; false when `asset` is used any other way. */
function literalNamesOnly(tree: TreeNode, names: Set<string>): boolean {
  const seen = new Set<object>();
  let literalOnly = true;
  const visit = (node: unknown): void => {
    if (!literalOnly || !node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) return node.forEach(visit);
    const n = node as TreeNode;
    if (n.typename === 'FunCall' && isAssetSymbol(n.name)) {
      const first = ((n.args as TreeNode | undefined)?.children as TreeNode[] | undefined)?.[0];
      if (first?.typename === 'Literal' && typeof first.value === 'string' && first.value.length <= MAX_NAME_CHARS)
        names.add(first.value);
      else literalOnly = false;
      visit(n.args);
      return;
    }
    if (isAssetSymbol(n)) {
      literalOnly = false;
      return;
    }
    for (const field of n.fields ?? []) visit(n[field]);
    if (Array.isArray(n.children)) visit(n.children);
  };
  try {
    visit(tree);
  } catch (error) {
    // A tree nested deeper than the stack: read as computed, the safe answer.
    if (error instanceof RangeError) return false;
    throw error;
  }
  return literalOnly;
}

function isAssetSymbol(node: unknown): boolean {
  const n = node as TreeNode | undefined;
  return n?.typename === 'Symbol' && n.value === 'asset';
}
