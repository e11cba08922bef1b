/**
 * Long tables printed at the cost of short ones (issue 52, docs/long-documents.md "Long tables").
 * Chromium lays a table out for print as one piece, and a table of thousands of rows costs memory
 * and time far out of proportion to its rows (15,000 ledger rows: ~9 GB in one renderer); tables of
 * a few hundred rows cost what their rows do. So, after the document has loaded and before it is
 * printed, each table of at least `minRows` body rows keeps its own element, header and footer, and
 * its body rows move, `partRows` at a time, into inner tables that sit each in one full-width cell
 * of the outer table. The outer table has a few hundred rows: its header repeats on every page as
 * before, and neither it nor the inner tables is long. The reader cannot tell: every column keeps
 * the width the whole table had (measured before the move, at the print width, and fixed on the
 * outer and every inner table alike), row order and styles stay (the look of each part's first and
 * last rows is compared before and after), and the added elements carry `role="none"` while the
 * rows keep theirs, so a tagged PDF's structure tree has the one table with all its rows.
 *
 * Runs in an isolated world (the print page has scripts off; the document's own code, when it has
 * any, cannot see or undo it). Left alone, with the reason: a table restyled as something else
 * than a table, one with a cell that spans rows, one whose columns cannot be read from a row, one
 * whose rows would look different in parts (a rule on `:first-child`, say).
 */
import type { CDPSession } from 'puppeteer-core';
import { isolatedWorld, pageFunction, raceSignal } from '../cdp-helpers.js';

const WORLD_NAME = 'pressroom-long-tables';

export interface LongTableOptions {
  /** A table with at least this many body rows is cut. */
  minRows: number;
  /** Body rows per inner table; made even, so that `:nth-child(odd|even)` striping is unchanged. */
  partRows: number;
}

export interface LongTablesCut {
  /** Tables cut into parts. */
  cut: number;
  /** Body rows moved into parts, over all cut tables. */
  rows: number;
  /** Long tables left as written, each with why (for the render's warnings). */
  leftAlone: string[];
}

/** How the page is printed, for the measure: the paper and margins of the print parameters, in inches. */
export interface PrintGeometry {
  paperWidth?: number | undefined;
  paperHeight?: number | undefined;
  landscape?: boolean | undefined;
  marginLeft?: number | undefined;
  marginRight?: number | undefined;
}

/** True when `html` may hold a table of `minRows` rows: a document without as many `<tr` costs nothing more. */
export function mayHoldLongTable(html: string, minRows: number, scripted: boolean): boolean {
  if (scripted) return true;
  const row = /<tr[\s>]/gi;
  let n = 0;
  while (row.exec(html)) if (++n >= minRows) return true;
  return false;
}

/**
 * Cuts the document's long tables (see the file's comment). Columns are measured as print lays them
 * out: print media, at the width of the page area (the document's `@page` size and margins over
 * `geometry`). The page keeps that media and width until `restore`, which the caller runs after
 * printing: the print is the same with them (compared page by page on the peers' report), and going
 * back first would lay the whole document out once more, for the screen (seconds for 15,000 rows).
 */
export async function cutLongTables(
  session: CDPSession,
  frameId: string,
  options: LongTableOptions & { geometry: PrintGeometry },
  signal: AbortSignal,
): Promise<LongTablesCut & { restore: () => Promise<boolean> }> {
  const inWorld = await isolatedWorld(session, { frameId, worldName: WORLD_NAME }, signal);
  const call = async (fn: string, arg: unknown) => {
    const { value, error } = await inWorld(fn, arg);
    return { value, error: error?.slice(0, 200) };
  };
  const nothing = async () => true;
  const partRows = options.partRows + (options.partRows % 2);
  const survey = await call(SURVEY_FUNCTION, { minRows: options.minRows, geometry: pagePx(options.geometry) });
  const found = survey.value as { longTables: number; areaWidth: number } | undefined;
  if (!found || found.longTables === 0)
    return { cut: 0, rows: 0, leftAlone: survey.error ? [survey.error] : [], restore: nothing };
  const width = async (px: number) =>
    raceSignal(
      session.send('Emulation.setDeviceMetricsOverride', {
        width: Math.max(1, Math.round(px)),
        height: 1000,
        deviceScaleFactor: 1,
        mobile: false,
      }),
      signal,
    );
  // The reused page goes back to the screen for the next document; false when it could not.
  const restore = async () => {
    try {
      await raceSignal(session.send('Emulation.clearDeviceMetricsOverride'), signal);
      await raceSignal(session.send('Emulation.setEmulatedMedia', { media: '' }), signal);
      return true;
    } catch {
      return false;
    }
  };
  try {
    await raceSignal(session.send('Emulation.setEmulatedMedia', { media: 'print' }), signal);
    await width(found.areaWidth);
    const done = await call(BROWSER_FUNCTION, { minRows: options.minRows, partRows });
    if (done.error)
      return { cut: 0, rows: 0, leftAlone: [`the long tables could not be cut (${done.error})`], restore };
    return { ...(done.value as LongTablesCut), restore };
  } catch (error) {
    await restore();
    throw error;
  }
}

/** The print parameters' page in CSS pixels (96 per inch); Chromium's default paper is Letter. */
function pagePx(g: PrintGeometry): { width: number; height: number; marginLeft: number; marginRight: number } {
  const [w, h] = [g.paperWidth ?? 8.5, g.paperHeight ?? 11];
  return {
    width: (g.landscape ? h : w) * 96,
    height: (g.landscape ? w : h) * 96,
    marginLeft: (g.marginLeft ?? 0.4) * 96,
    marginRight: (g.marginRight ?? 0.4) * 96,
  };
}

/* The DOM as the browser function uses it: this file is compiled without the DOM library. */
interface El {
  readonly tagName: string;
  readonly className: string;
  readonly children: ArrayLike<El>;
  readonly firstChild: El | null;
  readonly parentElement: El | null;
  readonly rows: ArrayLike<Row>;
  readonly tBodies: ArrayLike<El>;
  readonly attributes: ArrayLike<{ readonly name: string; readonly value: string }>;
  readonly style: {
    setProperty(name: string, value: string, priority?: string): void;
    getPropertyValue(name: string): string;
  };
  span: number;
  colSpan: number;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  hasAttribute(name: string): boolean;
  remove(): void;
  replaceChildren(...children: El[]): void;
  appendChild<T>(child: T): T;
  insertBefore<T>(child: T, before: El | null): T;
  cloneNode(deep: boolean): El;
  closest(selector: string): El | null;
  getBoundingClientRect(): { left: number; right: number; width: number };
  querySelectorAll(selector: string): ArrayLike<El>;
}
interface Row extends El {
  readonly cells: ArrayLike<El & { rowSpan: number }>;
}

/** Runs in the page, not here. */
function cutTables(o: LongTableOptions): LongTablesCut {
  const g = globalThis as unknown as {
    document: {
      querySelectorAll(s: string): ArrayLike<El>;
      createElement(n: string): El;
      createDocumentFragment(): El;
    };
    getComputedStyle(
      e: El,
    ): Record<string, string> & { display: string; borderCollapse: string; borderSpacing: string };
  };
  const doc = g.document;
  // What a row's position could change about it (`:first-child`, `:nth-child(3n)` in the document's
  // styles): its and its cells' computed look, compared before and after at every cut.
  const LOOK = [
    'backgroundColor',
    'backgroundImage',
    'color',
    'fontWeight',
    'fontSize',
    'fontStyle',
    'textAlign',
    'paddingTop',
    'paddingBottom',
    'paddingLeft',
    'paddingRight',
    'verticalAlign',
    'lineHeight',
    'borderTopWidth',
    'borderTopStyle',
    'borderTopColor',
    'borderBottomWidth',
    'borderBottomStyle',
    'borderBottomColor',
    'borderLeftWidth',
    'borderLeftStyle',
    'borderLeftColor',
    'borderRightWidth',
    'borderRightStyle',
    'borderRightColor',
    'display',
    'visibility',
    'breakBefore',
    'breakAfter',
    'breakInside',
  ];
  // A row's inherited properties (font, colour, line height) show only through its cells, whose own
  // values are compared; the parts' wrappers may pass different ones down to a row that uses none.
  const INHERITED = new Set(['color', 'fontWeight', 'fontSize', 'fontStyle', 'textAlign', 'lineHeight', 'visibility']);
  const look = (row: Row) =>
    [row, ...Array.from(row.cells)]
      .map((e, i) => {
        const computed = g.getComputedStyle(e);
        return LOOK.filter((name) => i > 0 || !INHERITED.has(name))
          .map((name) => computed[name])
          .join(',');
      })
      .join('|');
  const report: LongTablesCut = { cut: 0, rows: 0, leftAlone: [] };
  const important = (e: El, props: Record<string, string>) => {
    for (const [name, value] of Object.entries(props)) e.style.setProperty(name, value, 'important');
  };
  const tables = Array.from(doc.querySelectorAll('table'));
  tables.forEach((table, index) => {
    const bodies = Array.from(table.tBodies);
    const bodyRows = bodies.reduce((n, body) => n + body.rows.length, 0);
    if (bodyRows < o.minRows) return;
    const name = `table ${index + 1}${table.className ? ` (class "${String(table.className).slice(0, 40)}")` : ''}`;
    const style = g.getComputedStyle(table);
    if (style.display !== 'table') {
      report.leftAlone.push(`${name}: it is not displayed as a table`);
      return;
    }
    for (const body of bodies)
      for (const row of Array.from(body.rows))
        for (const cell of Array.from(row.cells))
          if (cell.rowSpan > 1) {
            report.leftAlone.push(`${name}: a cell spans several rows`);
            return;
          }
    // The column edges from the first of its first 200 rows that has one cell per column.
    const rows = Array.from(table.rows).slice(0, 200);
    const columns = Math.max(0, ...rows.map((r) => Array.from(r.cells).reduce((n, c) => n + c.colSpan, 0)));
    const sample = rows.find((r) => r.cells.length === columns);
    if (!sample || columns === 0) {
      report.leftAlone.push(`${name}: no row has one cell per column`);
      return;
    }
    const edges = Array.from(sample.cells).map((c) => c.getBoundingClientRect());
    const left = edges[0]!.left;
    const total = edges[edges.length - 1]!.right - left;
    if (!(total > 0)) {
      report.leftAlone.push(`${name}: its columns have no width`);
      return;
    }
    // In CSS px, as laid out at the print width: collapsed borders, from one cell's left edge to the
    // next's; separated, each cell's own box (the spacing is the table's). A share of the table's
    // width would not do: a column one pixel narrower wraps a cell that did not wrap.
    const collapsed = style.borderCollapse === 'collapse';
    const widths = edges.map((e, i) =>
      collapsed ? (i + 1 < edges.length ? edges[i + 1]!.left : e.right) - e.left : e.width,
    );
    const colgroup = () => {
      const group = doc.createElement('colgroup');
      for (const w of widths) {
        const col = doc.createElement('col');
        col.style.setProperty('width', `${w}px`);
        group.appendChild(col);
      }
      return group;
    };
    // Rows whose look could change: the first and last of each part, captured before anything moves.
    const edgeRows: Row[] = [];
    for (const body of bodies) {
      const all = Array.from(body.rows);
      for (let at = 0; at < all.length; at += o.partRows) {
        edgeRows.push(all[at]!);
        edgeRows.push(all[Math.min(all.length, at + o.partRows) - 1]!);
      }
    }
    const looks = edgeRows.map(look);
    // What is changed, so that it can be put back.
    const tableStyle = table.getAttribute('style');
    const colStyles: [El, string | null][] = [];
    const roled: El[] = [];
    const added: El[] = [];
    const moved: [El, Row[]][] = [];
    // The outer table: the measured widths, fixed; its own colgroups give way to them.
    const tableWidth = table.getBoundingClientRect().width;
    const parentWidth = table.parentElement?.getBoundingClientRect().width ?? tableWidth;
    important(table, { 'table-layout': 'fixed' });
    if (Math.abs(parentWidth - tableWidth) > 1) important(table, { width: `${tableWidth}px` });
    for (const group of Array.from(table.children).filter((c) => c.tagName === 'COLGROUP')) {
      let at = 0;
      for (const col of Array.from(group.children)) {
        const span = Math.max(1, col.span || 1);
        const w = widths.slice(at, at + span).reduce((a, b) => a + b, 0);
        colStyles.push([col, col.getAttribute('style')]);
        col.style.setProperty('width', `${w}px`, 'important');
        at += span;
      }
    }
    if (!Array.from(table.children).some((c) => c.tagName === 'COLGROUP')) {
      const caption = Array.from(table.children).find((c) => c.tagName === 'CAPTION');
      const group = colgroup();
      added.push(group);
      table.insertBefore(
        group,
        caption ? (caption as unknown as { nextSibling: El | null }).nextSibling : table.firstChild,
      );
    }
    const inner = doc.createElement('table');
    for (const attr of Array.from(table.attributes))
      if (['class', 'border', 'cellpadding', 'cellspacing', 'frame', 'rules', 'dir', 'lang'].includes(attr.name))
        inner.setAttribute(attr.name, attr.value);
    inner.setAttribute('role', 'none');
    // Separated borders: the part reaches over the outer table's spacing around its one cell, so
    // that its own spacing puts its columns where the outer table's are.
    const [h = 0, v = h] =
      style.borderCollapse === 'collapse' ? [] : style.borderSpacing.split(' ').map(Number.parseFloat);
    important(inner, {
      'table-layout': 'fixed',
      width: h ? `calc(100% + ${2 * h}px)` : '100%',
      margin: h || v ? `${-v}px ${-h}px` : '0',
      border: '0',
      float: 'none',
      'border-collapse': style.borderCollapse,
      'border-spacing': style.borderSpacing,
      'break-inside': 'auto',
      'break-before': 'auto',
      'break-after': 'auto',
    });
    const bare = {
      padding: '0',
      border: '0',
      background: 'none',
      height: 'auto',
      overflow: 'visible',
      'break-inside': 'auto',
      'break-before': 'auto',
      'break-after': 'auto',
    };
    const role = (e: El, value: string) => {
      if (e.hasAttribute('role')) return;
      e.setAttribute('role', value);
      roled.push(e);
    };
    for (const body of bodies) {
      // Out of the document while its rows move: no style of the live page is invalidated per row.
      const holder = body as unknown as { parentNode: El; nextSibling: El | null };
      const [parent, next] = [holder.parentNode, holder.nextSibling];
      body.remove();
      const moving = Array.from(body.rows);
      moved.push([body, moving]);
      const wrappers = doc.createDocumentFragment();
      for (let at = 0; at < moving.length; at += o.partRows) {
        const part = inner.cloneNode(false);
        part.appendChild(colgroup());
        const partBody = body.cloneNode(false);
        partBody.setAttribute('role', 'none');
        for (const row of moving.slice(at, at + o.partRows)) {
          // Inside a table of role none a row and its cells would lose theirs: they are said aloud.
          role(row, 'row');
          for (const cell of Array.from(row.cells)) role(cell, cell.tagName === 'TH' ? 'rowheader' : 'cell');
          partBody.appendChild(row);
        }
        part.appendChild(partBody);
        // Not a tr: a rule such as `tbody tr:nth-child(even) td` would match every cell of a part through it.
        const wrapperRow = doc.createElement('div');
        const wrapperCell = doc.createElement('td');
        wrapperRow.setAttribute('role', 'none');
        wrapperRow.setAttribute('data-pressroom-part', '');
        wrapperCell.setAttribute('role', 'none');
        wrapperCell.colSpan = columns;
        important(wrapperRow, { ...bare, display: 'table-row' });
        important(wrapperCell, { ...bare, display: 'table-cell' });
        wrapperCell.appendChild(part);
        wrapperRow.appendChild(wrapperCell);
        wrappers.appendChild(wrapperRow);
      }
      body.appendChild(wrappers);
      parent.insertBefore(body, next);
    }
    const changed = edgeRows.findIndex((row, i) => look(row) !== looks[i]);
    if (changed >= 0) {
      // Put back exactly as it was: the rows, their roles, the columns, the table's own style.
      for (const [body, rows] of moved) body.replaceChildren(...rows);
      for (const e of roled) e.removeAttribute('role');
      for (const e of added) e.remove();
      for (const [col, value] of colStyles)
        value === null ? col.removeAttribute('style') : col.setAttribute('style', value);
      tableStyle === null ? table.removeAttribute('style') : table.setAttribute('style', tableStyle);
      report.leftAlone.push(
        `${name}: its rows are styled by their position (such as :first-child or :last-child), which parts would change`,
      );
      return;
    }
    for (const [, rows] of moved) report.rows += rows.length;
    report.cut += 1;
  });
  return report;
}

interface PageRule {
  readonly type: number;
  readonly selectorText?: string;
  readonly style?: { getPropertyValue(name: string): string };
  readonly cssRules?: ArrayLike<PageRule>;
  readonly styleSheet?: { readonly cssRules: ArrayLike<PageRule> } | null;
}

/** Runs in the page: how many tables have `minRows` body rows, and the page area's width in CSS px. */
function surveyTables(o: {
  minRows: number;
  geometry: { width: number; height: number; marginLeft: number; marginRight: number };
}): {
  longTables: number;
  areaWidth: number;
} {
  const g = globalThis as unknown as {
    document: {
      querySelectorAll(s: string): ArrayLike<El>;
      createElement(n: string): El & { remove(): void };
      documentElement: El | null;
      styleSheets: ArrayLike<{ readonly cssRules: ArrayLike<PageRule> }>;
      adoptedStyleSheets?: ArrayLike<{ readonly cssRules: ArrayLike<PageRule> }>;
    };
    getComputedStyle(e: El): { width: string };
  };
  let longTables = 0;
  for (const table of Array.from(g.document.querySelectorAll('table'))) {
    let rows = 0;
    for (const body of Array.from(table.tBodies)) rows += body.rows.length;
    if (rows >= o.minRows) longTables++;
  }
  if (longTables === 0) return { longTables, areaWidth: 0 };
  // The page's own @page rules (no :first, :left or named pages) win over the print parameters.
  let size = '';
  let left = '';
  let right = '';
  const PAGE_RULE = 6;
  const visit = (rules: ArrayLike<PageRule>, depth: number): void => {
    for (const rule of Array.from(rules)) {
      if (depth > 20) return;
      if (rule.type === PAGE_RULE && !rule.selectorText && rule.style) {
        size = rule.style.getPropertyValue('size') || size;
        left = rule.style.getPropertyValue('margin-left') || left;
        right = rule.style.getPropertyValue('margin-right') || right;
      }
      try {
        if (rule.cssRules) visit(rule.cssRules, depth + 1);
        if (rule.styleSheet) visit(rule.styleSheet.cssRules, depth + 1);
      } catch {
        // A sheet this world may not read.
      }
    }
  };
  for (const sheet of [...Array.from(g.document.styleSheets), ...Array.from(g.document.adoptedStyleSheets ?? [])]) {
    try {
      visit(sheet.cssRules, 0);
    } catch {
      // A sheet this world may not read.
    }
  }
  const root = g.document.documentElement;
  const box = g.document.createElement('div');
  const probe = g.document.createElement('div');
  box.style.setProperty('position', 'absolute');
  box.style.setProperty('visibility', 'hidden');
  box.appendChild(probe);
  root?.appendChild(box);
  const px = (length: string, of: number): number | undefined => {
    box.style.setProperty('width', `${of}px`);
    probe.style.setProperty('width', '');
    probe.style.setProperty('width', length);
    if (!length || probe.style.getPropertyValue('width') === '') return undefined;
    const w = Number.parseFloat(g.getComputedStyle(probe).width);
    return Number.isFinite(w) ? w : undefined;
  };
  try {
    const MM = 96 / 25.4;
    const NAMED: Record<string, [number, number]> = {
      a5: [148 * MM, 210 * MM],
      a4: [210 * MM, 297 * MM],
      a3: [297 * MM, 420 * MM],
      b5: [176 * MM, 250 * MM],
      b4: [250 * MM, 353 * MM],
      'jis-b5': [182 * MM, 257 * MM],
      'jis-b4': [257 * MM, 364 * MM],
      letter: [816, 1056],
      legal: [816, 1344],
      ledger: [1056, 1632],
    };
    let width = o.geometry.width;
    const words = size.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const named = words.find((w) => NAMED[w]);
    const lengths = words.filter((w) => !NAMED[w] && w !== 'landscape' && w !== 'portrait' && w !== 'auto');
    const { height } = o.geometry;
    if (named) width = words.includes('landscape') ? NAMED[named]![1] : NAMED[named]![0];
    else if (lengths.length > 0) width = px(lengths[0]!, 0) ?? width;
    else if (words.includes('landscape')) width = Math.max(width, height);
    else if (words.includes('portrait')) width = Math.min(width, height);
    const marginLeft = (left ? px(left, width) : undefined) ?? o.geometry.marginLeft;
    const marginRight = (right ? px(right, width) : undefined) ?? o.geometry.marginRight;
    return { longTables, areaWidth: Math.max(1, width - marginLeft - marginRight) };
  } finally {
    box.remove();
  }
}

/** The browser functions as the source sent to the page. */
const SURVEY_FUNCTION = pageFunction(surveyTables);
const BROWSER_FUNCTION = pageFunction(cutTables);
