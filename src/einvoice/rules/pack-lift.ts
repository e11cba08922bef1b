/**
 * Makes the official rules linear in an invoice's lines without changing one verdict (issue 52).
 *
 * A schematron rule's assertion runs once per node its context matches: once per invoice line for a
 * line rule. Some of those assertions do not depend on the line at all (BR-CO-18's
 * `//rsm:SupplyChainTradeTransaction/…/ram:ApplicableTradeTax`, BR-AE-02's counts over the whole
 * document): SaxonJS evaluates them afresh on each line, walking the whole document each time, so the
 * check grows with the square of the lines. Such a test is lifted out of its template into a global
 * variable that holds its effective boolean value: XSLT evaluates a global once, on the same document,
 * and each line's assertion reads it. A test is lifted only when this module can show it reads nothing
 * of its context node: every path at its top level starts at the root, it calls no function that reads
 * the context (`current()`, `position()`, zero-argument `name()`, …) and it names no variable but the
 * stylesheet's own globals. Anything it cannot read with certainty is left as published.
 *
 * Proof that nothing changed is by running both: test/e2e/documents/einvoice-rules-lifted.test.ts
 * judges every example and test file of the pack, and long generated invoices with broken copies,
 * with the published and the lifted stylesheets, and requires the same fired rules at the same places.
 */

/** The lifted stylesheet; how many tests read globals now, and how many read `//name` from the key. */
export interface Lifted {
  readonly xslt: string;
  readonly lifted: number;
  readonly keyed: number;
}

/** The prefix of the globals this adds; a stylesheet that already uses it is left as published. */
const GLOBAL = 'pressroom-lifted-';

/** A token, with where it starts and ends in the expression. */
interface Token {
  readonly kind: 'name' | 'string' | 'number' | 'variable' | 'symbol';
  readonly text: string;
  readonly at: number;
  readonly end: number;
}

/** Two-character symbols before one-character ones. */
const SYMBOLS = ['//', '!=', '<=', '>=', '<<', '>>', '::', '..', '||', '=>', ':=', ...'/()[],=<>+-*|@.!?{}#$'];
const NAME = /^[A-Za-z_][\w.-]*(?::(?:[A-Za-z_][\w.-]*|\*))?|^\*:[A-Za-z_][\w.-]*/;
const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;

/** XPath 2/3 tokens, or null for anything this reader does not know (then the test is not lifted). */
function tokenize(xpath: string): Token[] | null {
  const tokens: Token[] = [];
  let rest = xpath;
  const push = (kind: Token['kind'], text: string, length = text.length) => {
    const at = xpath.length - rest.length;
    tokens.push({ kind, text, at, end: at + length });
    rest = rest.slice(length);
  };
  while ((rest = rest.replace(/^\s+/, '')) !== '') {
    if (rest.startsWith('(:')) return null; // a comment: rare in the published rules, not worth reading
    const quote = rest[0];
    if (quote === '"' || quote === "'") {
      let end = 1;
      for (;;) {
        end = rest.indexOf(quote, end);
        if (end < 0) return null;
        if (rest[end + 1] === quote) end += 2;
        else break;
      }
      push('string', rest.slice(0, end + 1));
      continue;
    }
    const number = NUMBER.exec(rest);
    if (number) {
      push('number', number[0]);
      continue;
    }
    if (rest[0] === '$') {
      const name = /^\$\s*([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)/.exec(rest);
      if (!name) return null;
      push('variable', name[1]!, name[0].length);
      continue;
    }
    const name = NAME.exec(rest);
    if (name) {
      push('name', name[0]);
      continue;
    }
    const symbol = SYMBOLS.find((s) => rest.startsWith(s));
    if (!symbol) return null;
    push('symbol', symbol);
  }
  return tokens;
}

/** Words that are operators when they follow an operand. */
const OPERATOR_WORDS = new Set([
  'and',
  'or',
  'div',
  'idiv',
  'mod',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'is',
  'to',
  'union',
  'intersect',
  'except',
  'instance',
  'of',
  'treat',
  'as',
  'castable',
  'cast',
  'then',
  'else',
  'return',
  'satisfies',
  'in',
]);
/** Words that start an expression that binds variables: not read (their `$` names are not globals). */
const BINDING_WORDS = new Set(['for', 'some', 'every', 'let']);
/** Functions whose value does not depend on the context even with no arguments. */
const CONTEXT_FREE_NILADIC = new Set([
  'true',
  'false',
  'current-date',
  'current-dateTime',
  'current-time',
  'implicit-timezone',
  'default-collation',
  'static-base-uri',
]);
/** Functions that read the context whatever their arguments. */
const READS_CONTEXT = new Set(['current', 'position', 'last', 'lang', 'id', 'idref', 'element-with-id']);
/** Node tests written like calls: steps, so they read the context at the top level. */
const KIND_TESTS = new Set([
  'node',
  'text',
  'comment',
  'processing-instruction',
  'element',
  'attribute',
  'document-node',
  'schema-element',
  'schema-attribute',
  'namespace-node',
]);

/** Whether a token ends an operand (then a following name or `*` is an operator). */
const endsOperand = (t: Token | undefined): boolean =>
  t !== undefined &&
  (t.kind === 'string' ||
    t.kind === 'number' ||
    t.kind === 'variable' ||
    (t.kind === 'name' && !OPERATOR_WORDS.has(t.text) && !BINDING_WORDS.has(t.text)) ||
    (t.kind === 'symbol' && [')', ']', '.', '..', '*'].includes(t.text)));

/** What a test may name and still be written at the stylesheet's top level. */
export interface Scope {
  /** The stylesheet's global variables and parameters. */
  readonly globals: ReadonlySet<string>;
  /** The namespace prefixes its root element declares. */
  readonly prefixes: ReadonlySet<string>;
}

/**
 * Whether `xpath` reads nothing of its context node or of local variables, and names only prefixes the
 * top level knows: its value is the same for every node of the document, wherever it is written.
 */
export function isContextFree(xpath: string, scope: Scope): boolean {
  const tokens = tokenize(xpath);
  return tokens !== null && contextFree(tokens, scope);
}

function contextFree(tokens: readonly Token[], scope: Scope): boolean {
  if (tokens.length === 0) return false;
  const unknownPrefix = tokens.some((t) => {
    const prefix = /^([A-Za-z_][\w.-]*):(?!:)/.exec(t.text)?.[1];
    return (t.kind === 'name' || t.kind === 'variable') && prefix !== undefined && !scope.prefixes.has(prefix);
  });
  if (unknownPrefix) return false;
  // Open brackets, innermost last: '[' starts a predicate (its own context), 'step' a bracketed step, '(' neither.
  const open: string[] = [];
  let previous: Token | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const next = tokens[i + 1];
    const topLevel = !open.includes('[') && !open.includes('step');
    const afterSlash = previous?.kind === 'symbol' && (previous.text === '/' || previous.text === '//');
    // The name after `@` or an axis belongs to the step those began.
    const inStep = previous?.kind === 'symbol' && (previous.text === '@' || previous.text === '::');
    const operatorPosition = endsOperand(previous);
    if (t.kind === 'variable') {
      if (!scope.globals.has(t.text)) return false;
    } else if (t.kind === 'name') {
      if (operatorPosition && OPERATOR_WORDS.has(t.text)) {
        // an operator word
      } else if (BINDING_WORDS.has(t.text) || t.text === 'if') {
        if (t.text !== 'if' || next?.text !== '(') return false;
      } else if (next?.kind === 'symbol' && next.text === '(' && !KIND_TESTS.has(t.text)) {
        const local = t.text.replace(/^fn:/, '');
        if (READS_CONTEXT.has(local)) return false;
        const niladic = tokens[i + 2]?.kind === 'symbol' && tokens[i + 2]!.text === ')';
        if (topLevel && niladic && !CONTEXT_FREE_NILADIC.has(local)) return false;
      } else if (next?.kind === 'symbol' && next.text === '::') {
        if (topLevel && !afterSlash) return false; // an axis step from the context
      } else if (topLevel && !afterSlash && !inStep) {
        return false; // a name test (or kind test) from the context node
      }
    } else if (t.kind === 'symbol') {
      switch (t.text) {
        case '[':
          open.push('[');
          break;
        case '(':
          // A group or a call right after `/` is a step (`//(a|b)`, `a/xs:decimal(b)`): its names are read from the path.
          open.push(
            afterSlash || (previous?.kind === 'name' && /^\/\/?$/.test(tokens[i - 2]?.text ?? '')) ? 'step' : '(',
          );
          break;
        case ']':
          if (open.pop() !== '[') return false;
          break;
        case ')':
          if (!['(', 'step'].includes(open.pop()!)) return false;
          break;
        case '.':
        case '..':
        case '@':
          if (topLevel && !afterSlash) return false;
          break;
        case '*':
          if (topLevel && !operatorPosition && !afterSlash && !inStep) return false;
          break;
        case '{':
        case '}':
        case '?':
        case '#':
        case ':=':
        case '$':
          return false; // maps, arrays, lookups, function references, inline bindings: not read
        default:
          break;
      }
    }
    previous = t;
  }
  return open.length === 0;
}

/** Whether the tokens hold a path from the root (a `/` or `//` where an operand starts). */
const startsAtRoot = (tokens: readonly Token[]): boolean =>
  tokens.some((t, i) => t.kind === 'symbol' && (t.text === '/' || t.text === '//') && !endsOperand(tokens[i - 1]));

/** The index of the `)` that closes the `(` at `open`. */
function closing(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const text = tokens[i]!.kind === 'symbol' ? tokens[i]!.text : '';
    if (text === '(' || text === '[') depth++;
    else if (text === ')' || text === ']') depth--;
    if (depth === 0) return i;
  }
  return -1;
}

/**
 * The expression with each largest context-free part that reads from the root — a bracketed group or a
 * function's argument — replaced by `$name` from `declare` (which keeps the part's value as a global):
 * `not(@unitCode) or (/rsm:…/@unitCode)` becomes `not(@unitCode) or $g`. Null when nothing is lifted.
 */
export function liftParts(xpath: string, scope: Scope, declare: (part: string) => string): string | null {
  const tokens = tokenize(xpath);
  if (!tokens) return null;
  const edits: { at: number; end: number; name: string }[] = [];
  const visit = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const t = tokens[i]!;
      if (t.kind !== 'symbol' || t.text !== '(') continue;
      const end = closing(tokens, i);
      if (end < 0 || end >= to) return;
      const before = tokens[i - 1];
      const call = before?.kind === 'name' && !(endsOperand(tokens[i - 2]) && OPERATOR_WORDS.has(before.text));
      if (call && KIND_TESTS.has(before.text)) {
        i = end;
        continue;
      }
      // A call's arguments one by one (its parentheses stay); a group whole, parentheses included.
      const parts: [number, number][] = [];
      if (call) {
        let start = i + 1;
        let depth = 0;
        for (let k = i + 1; k < end; k++) {
          const text = tokens[k]!.kind === 'symbol' ? tokens[k]!.text : '';
          if (text === '(' || text === '[') depth++;
          else if (text === ')' || text === ']') depth--;
          else if (text === ',' && depth === 0) {
            parts.push([start, k]);
            start = k + 1;
          }
        }
        parts.push([start, end]);
      } else parts.push([i, end + 1]);
      for (const [a, b] of parts) {
        const slice = tokens.slice(a, b);
        if (slice.length > 1 && contextFree(slice, scope) && startsAtRoot(slice)) {
          const at = tokens[a]!.at;
          const stop = tokens[b - 1]!.end;
          edits.push({ at, end: stop, name: declare(xpath.slice(at, stop)) });
        } else visit(call ? a : a + 1, call ? b : b - 1);
      }
      i = end;
    }
  };
  visit(0, tokens.length);
  if (edits.length === 0) return null;
  let out = '';
  let last = 0;
  for (const edit of edits) {
    out += `${xpath.slice(last, edit.at)}$${edit.name}`;
    last = edit.end;
  }
  return out + xpath.slice(last);
}

/** The key this adds: every element by `{namespace}local-name`, so `//p:name` is a lookup, not a walk. */
const KEY = 'pressroom-elements';
const KEY_DECLARATION = `<xsl:key name="${KEY}" match="*" use="concat('{', namespace-uri(), '}', local-name())"/>`;
/** Operators that make a predicate's value a boolean when they stand at its top level. */
const BOOLEAN_OPERATORS = new Set(['=', '!=', '<', '<=', '>', '>=', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'and', 'or']);

/** Whether the predicate from `open` (its `[`) to `close` (its `]`) is a comparison or a logical expression: never a position. */
function booleanPredicate(tokens: readonly Token[], open: number, close: number): boolean {
  let depth = 0;
  let comparison = false;
  for (let k = open + 1; k < close; k++) {
    const t = tokens[k]!;
    const text = t.kind === 'symbol' || t.kind === 'name' ? t.text : '';
    if (text === '(' || text === '[') depth++;
    else if (text === ')' || text === ']') depth--;
    else if (depth === 0) {
      if (text === ',' || (t.kind === 'name' && (BINDING_WORDS.has(text) || text === 'if'))) return false;
      if (BOOLEAN_OPERATORS.has(text) && (t.kind === 'symbol' || endsOperand(tokens[k - 1]))) comparison = true;
    }
  }
  return comparison;
}

/**
 * The expression with each `//p:name` that starts a path from the root read from the element key instead:
 * the same elements in the same order. Left as written when a predicate follows that could be a
 * position (`//p:name[1]` means each parent's first, not the document's).
 */
export function keyedDescendants(xpath: string, namespaces: ReadonlyMap<string, string>): string | null {
  const tokens = tokenize(xpath);
  if (!tokens) return null;
  let out = '';
  let last = 0;
  for (let i = 0; i < tokens.length - 1; i++) {
    const slash = tokens[i]!;
    const name = tokens[i + 1]!;
    if (slash.kind !== 'symbol' || slash.text !== '//' || endsOperand(tokens[i - 1]) || name.kind !== 'name') continue;
    const [prefix, local] = name.text.split(':');
    const uri = local === undefined ? undefined : namespaces.get(prefix!);
    const after = tokens[i + 2];
    if (uri === undefined || local === '*' || /['{}]/.test(uri) || after?.text === '(' || after?.text === '::')
      continue;
    let k = i + 2;
    let positional = false;
    while (tokens[k]?.kind === 'symbol' && tokens[k]!.text === '[') {
      const end = closing(tokens, k);
      if (end < 0 || !booleanPredicate(tokens, k, end)) positional = true;
      if (end < 0) break;
      k = end + 1;
    }
    if (positional) continue;
    out += `${xpath.slice(last, slash.at)}key('${KEY}', '{${uri}}${local}', /)`;
    last = name.end;
  }
  return last === 0 ? null : out + xpath.slice(last);
}

/** An expression as an XML attribute value in double quotes. */
const escapeAttribute = (value: string): string =>
  value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('"', '&quot;');

/** The five XML entities an attribute value may hold; anything else leaves the test as published. */
function unescapeAttribute(value: string): string | null {
  if (/&(?!(?:lt|gt|amp|quot|apos);)/.test(value)) return null;
  return value
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&amp;', '&');
}

/** A tag (attribute values may hold `>`), a comment, a processing instruction or a CDATA section. */
const MARKUP =
  /<(\/?)([\w.:-]+)((?:[^>"']|"[^"]*"|'[^']*')*?)(\/?)>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>/g;

/**
 * Lifts the context-free `test`s of `xsl:when` and `xsl:if` inside templates of a compiled schematron
 * into globals, written just inside the root element: a test is lifted only when the prefixes it names
 * are declared there, and nothing is lifted when an element below gives one of those another meaning
 * or sets `xpath-default-namespace`.
 */
export function liftContextFreeTests(xslt: string): Lifted {
  const root = /<xsl:(?:stylesheet|transform)\b(?:[^>"']|"[^"]*"|'[^']*')*>/.exec(xslt);
  if (!root || xslt.includes(GLOBAL) || xslt.includes(KEY)) return { xslt, lifted: 0, keyed: 0 };
  const at = root.index + root[0].length;
  const inner = xslt.slice(at);
  const declaredOn = (tag: string) =>
    [...tag.matchAll(/\sxmlns:([\w.-]+)\s*=\s*"([^"]*)"/g)].map((m): [string, string] => [m[1]!, m[2]!]);
  const prefixes = new Map(declaredOn(root[0]));
  const redeclared = declaredOn(inner).some(([prefix, uri]) => prefixes.has(prefix) && prefixes.get(prefix) !== uri);
  if (redeclared || xslt.includes('xpath-default-namespace') || inner.includes('<![CDATA['))
    return { xslt, lifted: 0, keyed: 0 };
  const tags = [...inner.matchAll(MARKUP)].filter((m) => m[2] !== undefined);
  // Globals: variables and parameters directly under the root, whose name nothing else declares.
  const declared = new Map<string, number>();
  const topLevel: string[] = [];
  let depth = 0;
  for (const m of tags) {
    if (m[1]) {
      depth--;
      continue;
    }
    if (m[2] === 'xsl:variable' || m[2] === 'xsl:param') {
      const name = /\sname\s*=\s*"([^"]+)"/.exec(m[3]!)?.[1];
      if (name) {
        declared.set(name, (declared.get(name) ?? 0) + 1);
        if (depth === 0) topLevel.push(name);
      }
    }
    if (!m[4]) depth++;
  }
  const scope: Scope = {
    globals: new Set(topLevel.filter((name) => declared.get(name) === 1)),
    prefixes: new Set(prefixes.keys()),
  };
  const declarations: string[] = [];
  const names = new Map<string, string>();
  /** The global that holds `expression`'s value (one per distinct expression). */
  const declare = (expression: string): string => {
    let name = names.get(expression);
    if (!name) {
      name = `${GLOBAL}${names.size + 1}`;
      names.set(expression, name);
      declarations.push(`<xsl:variable name="${name}" select="${escapeAttribute(expression)}"/>`);
    }
    return name;
  };
  const edits: { from: number; to: number; text: string }[] = [];
  let liftedTests = 0;
  let keyedTests = 0;
  const open: string[] = [];
  for (const m of tags) {
    if (m[1]) {
      open.pop();
      continue;
    }
    const inTemplate = open.includes('xsl:template') && !open.includes('xsl:function');
    const test = /^(\s+test\s*=\s*")([^"]*)"/.exec(m[3]!);
    if (inTemplate && (m[2] === 'xsl:when' || m[2] === 'xsl:if') && test) {
      const published = unescapeAttribute(test[2]!);
      const keyed = published === null ? null : keyedDescendants(published, prefixes);
      if (keyed !== null) keyedTests++;
      const xpath = keyed ?? published;
      const from = m.index + 1 + m[2].length + test[1]!.length;
      // The whole test when it can be (its effective boolean value), else its root-reading parts.
      const whole = xpath !== null && isContextFree(xpath, scope) ? declare(`boolean((${xpath}))`) : null;
      const parts = whole || xpath === null ? null : liftParts(xpath, scope, declare);
      const text = whole
        ? `$${whole}`
        : parts !== null
          ? escapeAttribute(parts)
          : keyed !== null
            ? escapeAttribute(keyed)
            : null;
      if (text !== null) edits.push({ from, to: from + test[2]!.length, text });
      if (whole || parts !== null) liftedTests++;
    }
    if (!m[4]) open.push(m[2]!);
  }
  if (edits.length === 0) return { xslt, lifted: 0, keyed: 0 };
  let body = '';
  let last = 0;
  for (const edit of edits) {
    body += inner.slice(last, edit.from) + edit.text;
    last = edit.to;
  }
  body += inner.slice(last);
  return {
    xslt: `${xslt.slice(0, at)}\n<!-- Pressroom: context-free tests as globals (src/einvoice/rules/pack-lift.ts) -->\n${[...(keyedTests > 0 ? [KEY_DECLARATION] : []), ...declarations].join('\n')}\n${body}`,
    lifted: liftedTests,
    keyed: keyedTests,
  };
}
