import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { compileFilenameTemplate } from '../filename-template.js';
import { prepareRows, RowsError, type PreparedRows } from './rows-file.js';

const dir = mkdtempSync(join(tmpdir(), 'pressroom-rows-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function file(name: string, text: string): string {
  const path = join(dir, `${++files}-${name}`);
  writeFileSync(path, text);
  return path;
}

async function prepare(
  path: string,
  options: { filename?: string; delivered?: string[] } = {},
): Promise<PreparedRows & { uploaded: string }> {
  const rows = await prepareRows({
    path,
    template: options.filename ? compileFilenameTemplate(options.filename) : undefined,
    isDelivered: (name) => (options.delivered ?? []).includes(name),
  });
  const uploaded = rows.body.kind === 'upload' ? readFileSync(rows.body.path, 'utf8') : JSON.stringify(rows.body.items);
  await rows.dispose();
  return Object.assign(rows, { uploaded });
}

describe('CSV rows', () => {
  const csv = '\uFEFFinvoice_number,total,note\nINV-1,120.5,"two\nlines"\n\nINV-2,80,"a, b"\nINV-3,,""\n';

  it('are uploaded as CSV with a _filename column, cells untouched, each row named by --filename', async () => {
    const rows = await prepare(file('rows.csv', csv), { filename: '{{ invoice_number }}' });
    expect(rows.body).toMatchObject({ kind: 'upload', mediaType: 'text/csv', fileName: 'rows.csv' });
    expect(parse(rows.uploaded)).toEqual([
      ['invoice_number', 'total', 'note', '_filename'],
      ['INV-1', '120.5', 'two\nlines', 'INV-1'],
      ['INV-2', '80', 'a, b', 'INV-2'],
      ['INV-3', '', '', 'INV-3'],
    ]);
    expect(rows.sent).toEqual([
      { rowNumber: 1, line: 3, name: 'INV-1' },
      { rowNumber: 2, line: 5, name: 'INV-2' },
      { rowNumber: 3, line: 6, name: 'INV-3' },
    ]);
  });

  it('map an uploaded line back to the user’s row, across multi-line cells and skipped rows', async () => {
    const rows = await prepare(file('rows.csv', csv), { filename: '{{ invoice_number }}', delivered: ['INV-1'] });
    expect(rows.skipped).toBe(1);
    expect(rows.sent.map((r) => r.rowNumber)).toEqual([2, 3]);
    expect(parse(rows.uploaded).map((r: string[]) => r[0])).toEqual(['invoice_number', 'INV-2', 'INV-3']);
    expect(rows.rowAtUploadLine(1)).toBeUndefined();
    expect(rows.rowAtUploadLine(2)?.rowNumber).toBe(2);
    expect(rows.rowAtUploadLine(3)?.rowNumber).toBe(3);
  });

  it('keep their own _filename column (sanitized), and default to document-<row>', async () => {
    const rows = await prepare(file('rows.csv', 'n,_filename\n1,my file\n2,\n'));
    expect(rows.sent.map((r) => r.name)).toEqual(['my_file', 'document-2']);
    expect(parse(rows.uploaded)).toEqual([
      ['n', '_filename'],
      ['1', 'my_file'],
      ['2', 'document-2'],
    ]);
  });

  it.each([
    ['a,b\n1,2,3\n', /not a CSV file the batch API can read/],
    ['', /empty; the first line must name the template's fields/],
    ['a,b\n', /a header but no rows/],
  ])('refuse %j', async (text, message) => {
    await expect(prepare(file('rows.csv', text))).rejects.toThrow(message);
  });

  it('refuse two rows with one name, naming both', async () => {
    await expect(prepare(file('rows.csv', 'n\nA\nB\nA\n'), { filename: '{{ n }}' })).rejects.toThrow(
      /rows 1 and 3 of .*rows.csv would both be A.pdf/,
    );
  });

  it('refuse two rows whose names differ only in case: one file on macOS and Windows (issue 49)', async () => {
    await expect(prepare(file('rows.csv', 'n\nReport\nB\nreport\n'), { filename: '{{ n }}' })).rejects.toThrow(
      /rows 1 and 3 of .*rows.csv would be Report.pdf and report.pdf, one file on macOS and Windows/,
    );
  });

  it('refuse a row --filename cannot name, with its row and line', async () => {
    await expect(prepare(file('rows.csv', 'n,m\nA,1\n,2\n'), { filename: '{{ n }}' })).rejects.toThrow(
      /row 2 \(.*rows.csv line 3\): \{\{ n \}\} has no value/,
    );
  });
});

describe('NDJSON rows', () => {
  it('take both line shapes and are uploaded as {data, filename} lines', async () => {
    const text = '{"data": {"n": 1}, "filename": "first"}\n\n{"n": 2}\n{"data": {"n": 3}, "extra": true}\n';
    const rows = await prepare(file('rows.ndjson', text));
    expect(rows.body).toMatchObject({ kind: 'upload', mediaType: 'application/x-ndjson' });
    expect(
      rows.uploaded
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { data: { n: 1 }, filename: 'first' },
      { data: { n: 2 }, filename: 'document-2' },
      { data: { n: 3 }, filename: 'document-3' },
    ]);
    expect(rows.sent.map((r) => r.line)).toEqual([1, 3, 4]);
    expect(rows.rowAtUploadLine(2)?.rowNumber).toBe(2);
  });

  it.each([
    ['{"n": 1}\nnot json\n', /line 2: not JSON/],
    ['[1, 2]\n', /line 1: a row must be a JSON object/],
  ])('refuse %j', async (text, message) => {
    await expect(prepare(file('rows.ndjson', text))).rejects.toThrow(message);
  });
});

describe('JSON rows', () => {
  it('are sent as items, named', async () => {
    const rows = await prepare(file('rows.json', JSON.stringify([{ n: 'a' }, { data: { n: 'b' } }])), {
      filename: 'x-{{ n }}',
    });
    expect(rows.body).toEqual({
      kind: 'items',
      items: [
        { data: { n: 'a' }, filename: 'x-a' },
        { data: { n: 'b' }, filename: 'x-b' },
      ],
    });
  });

  it.each([
    ['{"n": 1}', /must be a JSON array/],
    ['[', /not JSON/],
    ['[]', /no rows/],
  ])('refuse %j', async (text, message) => {
    await expect(prepare(file('rows.json', text))).rejects.toThrow(message);
  });
});

describe('the rows file', () => {
  it.each([
    [join(dir, 'missing.csv'), /no such file/],
    [dir.replace(/$/, '/'), /name a .csv/],
    [file('rows.txt', 'a\n1\n'), /name a .csv, .ndjson \(or .jsonl\) or .json file/],
  ])('%s is refused', async (path, message) => {
    await expect(prepare(path)).rejects.toThrow(RowsError);
    await expect(prepare(path)).rejects.toThrow(message);
  });
});
