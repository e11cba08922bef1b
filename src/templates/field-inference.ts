/**
 * Infers a template's input fields from its variables, using Nunjucks' own parser (never regexes, and
 * never running the template). Rules (also in docs/templates.md):
 * - `{{ name }}` → a `string` field `name`.
 * - `{{ customer.name }}` → nested objects are flattened into dotted keys: field `customer.name`. The
 *   renderer accepts both `{"customer": {"name": …}}` and `{"customer.name": …}` in `data`.
 * - `{% for item in items %}…{{ item.qty }}…{% endfor %}` → `items` is an `array` field whose `spec`
 *   lists the item attributes used (`qty`), dotted the same way; a loop nested in a loop makes the
 *   attribute type `array`.
 * - Types come from use: arithmetic, numeric comparisons and the filters `round`, `float`, `abs`, `sum`
 *   → `number`; the `int` filter → `integer`; a variable only ever used as a condition → `boolean`;
 *   list filters (`join`, `sort`, `first`, `last`, `batch`, `slice`, `groupby`, …) → `array`.
 * - `required` is true when the variable is printed or looped over outside any `if`, and not through
 *   the `default` filter or an `is defined` test.
 * - Names bound in the template (`set`, macro arguments, loop variables, `loop`, `caller`) and the
 *   globals (`range`, `cycler`, `joiner`, `dict`…) are not fields.
 */
import { filterFieldHint, SUPPORTED_GLOBALS } from '../template-language/catalogue.js';
import { parseTemplate } from '../template-language/compiler.js';

export type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'array';
export type SpecType = 'text' | 'number' | 'boolean' | 'array';

export interface FieldSpec {
  name: string;
  label: string;
  type: SpecType;
}

/** A field as a user may send it: everything but `key` and `label` has a default. */
export interface FieldInput {
  key: string;
  label: string;
  type?: FieldType;
  required?: boolean;
  helpText?: string | null;
  spec?: { name: string; label: string; type?: string }[] | null;
}

/** Fills the defaults of user-given fields (type `string`, not required, spec item type `text`). */
export function normalizeFields(fields: FieldInput[]): FieldDefinition[] {
  return fields.map((f) => ({
    key: f.key,
    label: f.label,
    type: f.type ?? 'string',
    required: f.required ?? false,
    helpText: f.helpText ?? null,
    spec: f.spec ? f.spec.map((s) => ({ name: s.name, label: s.label, type: (s.type ?? 'text') as SpecType })) : null,
  }));
}

export interface FieldDefinition {
  key: string;
  label: string;
  type: FieldType;
  required: boolean;
  helpText: string | null;
  spec: FieldSpec[] | null;
  /** A fillable PDF form's choice field (radio group, dropdown, list box): the values it takes (pdf-forms/form-fields.ts). */
  options?: string[];
}

type Hint = 'printed' | 'number' | 'integer' | 'boolean' | 'array';

/** One variable path in the tree of uses. */
interface VarNode {
  hints: Set<Hint>;
  required: boolean;
  children: Map<string, VarNode>;
  /** The element of an array (set when the path is looped over). */
  item?: VarNode;
}

/** The language's globals (catalogue.ts) and the names nunjucks binds itself: never fields. */
const GLOBALS = new Set([
  ...SUPPORTED_GLOBALS,
  'loop',
  'caller',
  'super',
  'self',
  'varargs',
  'kwargs',
  'true',
  'false',
  'none',
  'True',
  'False',
  'None',
]);
const ARITHMETIC = new Set(['Sub', 'Mul', 'Div', 'FloorDiv', 'Mod', 'Pow', 'Neg', 'Pos']);

const newNode = (): VarNode => ({ hints: new Set(), required: false, children: new Map() });

interface Ctx {
  /** Names bound in scope → the node they alias (loop variables) or null (plain locals). */
  scope: Map<string, VarNode | null>;
  /** Inside an `if`, an inline if, `and`/`or`, or a `default` filter: uses are not required. */
  conditional: boolean;
}

type AnyNode = { typename: string; fields?: string[]; [k: string]: any };

class Inferrer {
  readonly root = newNode();

  /** Resolves `a.b.c` (literal lookups only) to the tree node, creating it; null for computed values. */
  private resolve(node: AnyNode, ctx: Ctx): VarNode | null {
    if (node.typename === 'Symbol') {
      const name = String(node.value);
      if (ctx.scope.has(name)) return ctx.scope.get(name) ?? null;
      if (GLOBALS.has(name)) return null;
      return this.child(this.root, name);
    }
    if (node.typename === 'LookupVal') {
      const parent = this.resolve(node.target, ctx);
      if (!parent) return null;
      if (node.val?.typename === 'Literal' && typeof node.val.value === 'string')
        return this.child(parent, node.val.value);
      // a[i] with a computed index: `a` is a list (or map); nothing more is known.
      this.walk(node.val, ctx);
      parent.hints.add('array');
      return null;
    }
    return null;
  }

  private child(parent: VarNode, name: string): VarNode {
    let node = parent.children.get(name);
    if (!node) parent.children.set(name, (node = newNode()));
    return node;
  }

  /** Records a use of `node` as a value with an optional type hint. */
  private use(node: AnyNode, ctx: Ctx, hint?: Hint): VarNode | null {
    if (node.typename === 'Symbol' || node.typename === 'LookupVal') {
      const target = this.resolve(node, ctx);
      if (target) {
        if (hint) target.hints.add(hint);
        if (!ctx.conditional) target.required = true;
      }
      return target;
    }
    this.walk(node, ctx);
    return null;
  }

  walk(node: AnyNode | null | undefined, ctx: Ctx): void {
    if (!node || typeof node !== 'object') return;
    switch (node.typename) {
      case 'Symbol':
      case 'LookupVal':
        this.use(node, ctx, 'printed');
        return;
      case 'Output':
        for (const child of node.children ?? []) this.walk(child, ctx);
        return;
      case 'Set': {
        this.walk(node.value ?? node.body, ctx);
        for (const target of node.targets ?? []) ctx.scope.set(String(target.value), null);
        return;
      }
      case 'If':
      case 'IfAsync':
      case 'InlineIf': {
        this.condition(node.cond, ctx);
        const inner = { ...ctx, conditional: true };
        this.walk(node.body, inner);
        this.walk(node.else_, inner);
        return;
      }
      case 'For':
      case 'AsyncEach':
      case 'AsyncAll':
        return this.forLoop(node, ctx);
      case 'Macro':
      case 'Caller': {
        if (node.name?.typename === 'Symbol') ctx.scope.set(String(node.name.value), null);
        const scope = new Map(ctx.scope);
        for (const arg of node.args?.children ?? []) {
          if (arg.typename === 'Symbol') scope.set(String(arg.value), null);
          if (arg.typename === 'KeywordArgs')
            for (const pair of arg.children ?? []) scope.set(String(pair.key.value), null);
        }
        this.walk(node.body, { scope, conditional: true });
        return;
      }
      case 'FunCall':
        // The callee is a macro or global, not data; its arguments are values.
        if (node.name?.typename !== 'Symbol') this.walk(node.name, ctx);
        this.walk(node.args, ctx);
        return;
      case 'Filter':
      case 'FilterAsync':
        return this.filter(node, ctx);
      case 'Is':
        // `x is defined` / `x is number`: a test, so the variable is optional.
        this.use(node.left, { ...ctx, conditional: true });
        return;
      case 'And':
      case 'Or':
        this.condition(node.left, { ...ctx, conditional: true });
        this.condition(node.right, { ...ctx, conditional: true });
        return;
      case 'Not':
        this.condition(node.target, ctx);
        return;
      case 'Compare':
        return this.compare(node, ctx);
      case 'Add':
        return this.add(node, ctx);
      case 'KeywordArgs':
        for (const pair of node.children ?? []) this.walk(pair.value, ctx);
        return;
      case 'Import':
      case 'FromImport':
      case 'Include':
      case 'Extends':
        // Saved templates are self-contained; imports resolve to nothing here.
        return;
      default:
        if (ARITHMETIC.has(node.typename)) {
          for (const side of [node.left, node.right, node.target]) if (side) this.use(side, ctx, 'number');
          return;
        }
        for (const field of node.fields ?? []) {
          const value = node[field];
          if (Array.isArray(value)) value.forEach((v) => this.walk(v, ctx));
          else if (value && typeof value === 'object') this.walk(value, ctx);
        }
    }
  }

  /** A bare variable used as a condition suggests a boolean, unless it is used as something else too. */
  private condition(node: AnyNode | null | undefined, ctx: Ctx): void {
    if (!node) return;
    if (node.typename === 'Symbol' || node.typename === 'LookupVal')
      this.use(node, { ...ctx, conditional: true }, 'boolean');
    else this.walk(node, ctx);
  }

  private forLoop(node: AnyNode, ctx: Ctx): void {
    const list = this.use(node.arr, ctx, 'array');
    const scope = new Map(ctx.scope);
    if (node.name?.typename === 'Array') {
      // {% for key, value in mapping %}: the values are unknown shapes.
      for (const name of node.name.children ?? []) scope.set(String(name.value), null);
    } else if (node.name?.typename === 'Symbol') {
      if (list) list.item ??= newNode();
      scope.set(String(node.name.value), list?.item ?? null);
    }
    this.walk(node.body, { ...ctx, scope });
    this.walk(node.else_, { ...ctx, scope: new Map(ctx.scope), conditional: true });
  }

  private filter(node: AnyNode, ctx: Ctx): void {
    const name = String(node.name?.value ?? '');
    const [input, ...rest] = node.args?.children ?? [];
    const fieldHint = filterFieldHint(name);
    const optional = fieldHint === 'optional';
    const hint: Hint =
      fieldHint === 'number' || fieldHint === 'integer' || fieldHint === 'array' ? fieldHint : 'printed';
    if (input) this.use(input, optional ? { ...ctx, conditional: true } : ctx, hint);
    for (const arg of rest) this.walk(arg, ctx);
  }

  private compare(node: AnyNode, ctx: Ctx): void {
    const operands: AnyNode[] = [node.expr, ...(node.ops ?? []).map((op: AnyNode) => op.expr)];
    const numeric = operands.some((o) => o?.typename === 'Literal' && typeof o.value === 'number');
    for (const operand of operands)
      if (operand) this.use(operand, { ...ctx, conditional: true }, numeric ? 'number' : undefined);
  }

  private add(node: AnyNode, ctx: Ctx): void {
    const numeric = [node.left, node.right].some((o) => o?.typename === 'Literal' && typeof o.value === 'number');
    for (const side of [node.left, node.right]) this.use(side, ctx, numeric ? 'number' : 'printed');
  }
}

function fieldType(node: VarNode): FieldType {
  if (node.item || node.hints.has('array')) return 'array';
  if (node.hints.has('integer')) return 'integer';
  if (node.hints.has('number')) return 'number';
  if (node.hints.has('boolean') && !node.hints.has('printed')) return 'boolean';
  return 'string';
}

const SPEC_TYPE: Record<FieldType, SpecType> = {
  string: 'text',
  integer: 'number',
  number: 'number',
  boolean: 'boolean',
  array: 'array',
};

/** "invoice.issue_date" → "Invoice issue date". */
export function humanize(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[._\s-]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function leaves(node: VarNode, prefix: string, out: [string, VarNode][]): void {
  for (const [name, child] of node.children) {
    const key = prefix ? `${prefix}.${name}` : name;
    if (child.children.size > 0 && !child.item && !child.hints.has('array')) leaves(child, key, out);
    else out.push([key, child]);
  }
}

function exampleFor(sample: unknown, key: string): string | null {
  let value: unknown = sample;
  for (const part of key.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
    value = Object.prototype.hasOwnProperty.call(value, part) ? (value as Record<string, unknown>)[part] : undefined;
  }
  if (value === undefined || value === null || typeof value === 'object') return null;
  const text = String(value);
  return `Example: ${text.length > 80 ? `${text.slice(0, 77)}…` : text}`;
}

/**
 * Infers fields from the template sources (html, css, header, footer). Throws TEMPLATE_SYNTAX_ERROR on
 * a syntax error (callers check syntax first).
 */
export function inferFields(sources: string[], sampleData?: unknown): FieldDefinition[] {
  const inferrer = new Inferrer();
  const ctx: Ctx = { scope: new Map(), conditional: false };
  for (const source of sources) {
    if (source) inferrer.walk(parseTemplate(source) as unknown as AnyNode, ctx);
  }
  const entries: [string, VarNode][] = [];
  leaves(inferrer.root, '', entries);
  return entries.map(([key, node]) => {
    const type = fieldType(node);
    let spec: FieldSpec[] | null = null;
    if (type === 'array') {
      const items: [string, VarNode][] = [];
      if (node.item) leaves(node.item, '', items);
      spec = items.map(([name, item]) => ({ name, label: humanize(name), type: SPEC_TYPE[fieldType(item)] }));
    }
    return { key, label: humanize(key), type, required: node.required, helpText: exampleFor(sampleData, key), spec };
  });
}
