/**
 * Copy-paste snippets (curl, JavaScript fetch, Python requests) that generate a PDF from one template
 * with one data set. The API key is never written into a snippet: each reads PRESSROOM_API_KEY from the
 * environment, so a pasted snippet cannot leak the studio's key.
 */
export type RunMode = 'url' | 'binary' | 'async';

export interface SnippetInput {
  baseUrl: string;
  templateId: string;
  data: Record<string, unknown>;
  mode: RunMode;
  filename?: string;
  /** A template version's tag; omitted renders the draft. */
  version?: string;
  /** An e-invoice to attach (docs/einvoice.md); XRechnung's binary answer is XML. */
  einvoice?: { format: string; profile?: string; invoice: Record<string, unknown> };
  /** `watermark`, `sign`, `protect` as Run sends them (passwords already replaced by placeholders). */
  finishing?: Record<string, unknown>;
}

export interface Snippets {
  curl: string;
  javascript: string;
  python: string;
}

function requestBody(input: SnippetInput): Record<string, unknown> {
  const body: Record<string, unknown> = { template_id: input.templateId, data: input.data };
  if (input.mode === 'binary') body.export_type = 'binary';
  if (input.mode === 'url') body.export_type = 'url';
  if (input.filename) body.filename = input.filename;
  if (input.version) body.version = input.version;
  if (input.einvoice) body.einvoice = input.einvoice;
  Object.assign(body, input.finishing ?? {});
  return body;
}

/** The file a binary answer is saved as: XML for XRechnung, else PDF. */
const outputName = (input: SnippetInput) =>
  `${input.filename || 'document'}.${input.einvoice?.format.startsWith('xrechnung') ? 'xml' : 'pdf'}`;

const endpoint = (input: SnippetInput) =>
  `${input.baseUrl.replace(/\/+$/, '')}/v1/pdf/${input.mode === 'async' ? 'create-async' : 'create'}`;

/** A string as one single-quoted shell word. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A JSON value as a Python literal (True/False/None; JSON string escapes are valid Python). */
export function pythonLiteral(value: unknown, indent = 0): string {
  const pad = (n: number) => ' '.repeat(n);
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'None';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => `${pad(indent + 4)}${pythonLiteral(v, indent + 4)}`).join(',\n')},\n${pad(indent)}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${pad(indent + 4)}${JSON.stringify(k)}: ${pythonLiteral(v, indent + 4)}`).join(',\n')},\n${pad(indent)}}`;
}

function curlSnippet(input: SnippetInput): string {
  const body = JSON.stringify(requestBody(input), null, 2);
  const lines = [
    `curl -sS -X POST ${shellQuote(endpoint(input))} \\`,
    `  -H "x-api-key: $PRESSROOM_API_KEY" \\`,
    `  -H 'content-type: application/json' \\`,
    `  -d ${shellQuote(body)}${input.mode === 'binary' ? ' \\' : ''}`,
  ];
  if (input.mode === 'binary') lines.push(`  -o ${shellQuote(outputName(input))}`);
  return lines.join('\n');
}

function javascriptSnippet(input: SnippetInput): string {
  const body = JSON.stringify(requestBody(input), null, 2).replace(/\n/g, '\n  ');
  const head = [
    `const response = await fetch(${JSON.stringify(endpoint(input))}, {`,
    `  method: 'POST',`,
    `  headers: { 'x-api-key': process.env.PRESSROOM_API_KEY, 'content-type': 'application/json' },`,
    `  body: JSON.stringify(${body}),`,
    `});`,
    `if (!response.ok) throw new Error(\`\${response.status}: \${await response.text()}\`);`,
  ];
  if (input.mode === 'binary') {
    return [
      `import { writeFile } from 'node:fs/promises';`,
      '',
      ...head,
      `await writeFile(${JSON.stringify(outputName(input))}, Buffer.from(await response.arrayBuffer()));`,
    ].join('\n');
  }
  if (input.mode === 'async')
    return [
      ...head,
      `const { job_id } = await response.json();`,
      `// poll GET /v1/pdf/jobs/\${job_id} until status is completed or failed`,
    ].join('\n');
  return [...head, `const { url, filename, expires_in } = await response.json();`, `console.log(url);`].join('\n');
}

function pythonSnippet(input: SnippetInput): string {
  const lines = [
    'import os',
    'import requests',
    '',
    'response = requests.post(',
    `    ${JSON.stringify(endpoint(input))},`,
    '    headers={"x-api-key": os.environ["PRESSROOM_API_KEY"]},',
    `    json=${pythonLiteral(requestBody(input), 4)},`,
    '    timeout=120,',
    ')',
    'response.raise_for_status()',
  ];
  if (input.mode === 'binary')
    lines.push(`with open(${JSON.stringify(outputName(input))}, "wb") as f:`, '    f.write(response.content)');
  else if (input.mode === 'async')
    lines.push(
      'job_id = response.json()["job_id"]',
      '# poll GET /v1/pdf/jobs/{job_id} until status is completed or failed',
    );
  else lines.push('print(response.json()["url"])');
  return lines.join('\n');
}

/** The three snippets for one template, data set and mode. */
export function buildSnippets(input: SnippetInput): Snippets {
  return { curl: curlSnippet(input), javascript: javascriptSnippet(input), python: pythonSnippet(input) };
}
