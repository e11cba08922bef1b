/**
 * The documentation's shell blocks, as the docs test runs them (issue 50): every ```sh / ```bash /
 * ```shell block of README.md, docs/*.md and integrations/n8n/README.md, in page order, with what its
 * page says about it. A page author says it in an HTML comment on the last line above the block's fence
 * (a line of its own, or the end of the sentence that leads into the block):
 *
 *   <!-- not run by the docs test: REASON -->              the block is skipped, and listed by name with REASON
 *   <!-- the docs test runs instead (WHY): COMMAND -->     the block is shown to readers; COMMAND runs in its place
 *   <!-- the docs test saves this block as FILE -->        (any fenced block) its text is written to FILE when reached
 *   <!-- the docs test runs this page after PAGE -->       (anywhere) the page continues PAGE: PAGE's blocks run first
 *
 * Output examples and request bodies are fenced ```json / ```text, never sh, so they are not taken for
 * commands. docs/performance-log/ is a dated record of what was run then, not instructions: not run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import MarkdownIt from 'markdown-it';

const SHELL = new Set(['sh', 'bash', 'shell']);
const MARKER = /<!--\s*(.*?docs test.*?)\s*-->/;
const SKIP = /^not run by the docs test:\s*(.+)$/;
const INSTEAD = /^the docs test runs instead(?: \([^)]*\))?:\s*(.+)$/;
const SAVES = /^the docs test saves this block as\s+(\S+)$/;
const AFTER_TEXT = /^the docs test runs this page after\s+(\S+)$/;
const AFTER = /<!--\s*the docs test runs this page after\s+(\S+)\s*-->/;

/** One fenced shell block, or a block saved as a file, in page order. */
export interface DocBlock {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  kind: 'shell' | 'file';
  text: string;
  /** Why it is not run (shown as a skipped test). */
  skip?: string;
  /** What runs in its place. */
  instead?: string;
  /** For `kind: 'file'`: where its text is written. */
  file?: string;
}

/** A page with its blocks, and the page it continues (README.md's first steps by default). */
export interface DocPage {
  name: string;
  blocks: DocBlock[];
  after?: string;
  /** Marker comments that say nothing the harness knows: a typo must not un-skip a block silently. */
  unknownMarkers: string[];
  /** Fences without a shell language whose first line reads as a command: they would escape the test. */
  untaggedCommands: number[];
}

/** The pages the docs test reads, by path from the repository root (new pages are picked up by name). */
export function docPagePaths(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs, 'integrations/n8n/README.md'];
}

const md = new MarkdownIt({ html: true });
const LOOKS_LIKE_A_COMMAND = /^(curl|node|npm|npx|bash|jq|pressroom|docker|openssl|pdf\w+|qpdf) /;

/** Reads one page's blocks and markers. */
export function readDocPage(root: string, name: string): DocPage {
  const source = readFileSync(join(root, name), 'utf8');
  const lines = source.split('\n');
  const blocks: DocBlock[] = [];
  const unknownMarkers: string[] = [];
  const untaggedCommands: number[] = [];
  for (const token of md.parse(source, {})) {
    if (token.type !== 'fence' || !token.map) continue;
    const line = token.map[0] + 1;
    const lang = token.info.trim().split(/\s+/)[0] ?? '';
    const marker = markerAbove(lines, token.map[0]);
    if (marker && ![SKIP, INSTEAD, SAVES, AFTER_TEXT].some((form) => form.test(marker)))
      unknownMarkers.push(`line ${line}: ${marker}`);
    const saves = marker ? SAVES.exec(marker)?.[1] : undefined;
    if (saves) {
      blocks.push({ page: name, line, kind: 'file', text: token.content, file: saves });
    } else if (SHELL.has(lang)) {
      blocks.push({
        page: name,
        line,
        kind: 'shell',
        text: token.content,
        skip: marker ? SKIP.exec(marker)?.[1] : undefined,
        instead: marker ? INSTEAD.exec(marker)?.[1] : undefined,
      });
    } else if (lang === '' || lang === 'text' || lang === 'console') {
      if (LOOKS_LIKE_A_COMMAND.test(token.content.trimStart())) untaggedCommands.push(line);
    }
  }
  return { name, blocks, after: AFTER.exec(source)?.[1], unknownMarkers, untaggedCommands };
}

/** The docs-test marker on the last non-blank line above line index `fence`, if any. */
function markerAbove(lines: string[], fence: number): string | undefined {
  for (let i = fence - 1; i >= 0; i--) {
    const text = lines[i]!.trim();
    if (text === '') continue;
    return MARKER.exec(text)?.[1];
  }
  return undefined;
}

/** The blocks of a page's section, from its heading to the next heading of the same or a higher level. */
export function blocksUnderHeading(root: string, page: DocPage, heading: string): DocBlock[] {
  const lines = readFileSync(join(root, page.name), 'utf8').split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').trim() === heading);
  if (start < 0) throw new Error(`${page.name} has no "${heading}" section: the docs test starts every page from it`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  let end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && /^#+/.exec(l)![0].length <= level);
  if (end < 0) end = lines.length;
  return page.blocks.filter((b) => b.line > start && b.line <= end);
}
