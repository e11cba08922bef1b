/** `pressroom generate`'s options, checked before anything is read or sent (a mistake is exit code 2). */
import { DEFAULT_MAX_FILE_MB } from './download-bounds.js';
import { compileFilenameTemplate, FilenameTemplateError, type FilenameTemplate } from './filename-template.js';

/** The options as commander hands them over (`--key` and `--url` may come from the environment). */
export interface RawGenerateOptions {
  url?: string;
  key?: string;
  template?: string;
  version?: string;
  data?: string;
  out?: string;
  zip?: string;
  merged?: string;
  filename?: string;
  resume?: boolean;
  /** `--max-file-mb`: the largest file a link may answer, in MiB. */
  maxFileMb?: string;
}

/** Where the documents go. */
export type Destination =
  | { kind: 'out'; dir: string }
  | { kind: 'zip'; file: string }
  | { kind: 'merged'; file: string };

export interface GenerateOptions {
  url: string;
  key: string;
  templateId: string;
  version: string | undefined;
  dataPath: string;
  destination: Destination;
  filename: FilenameTemplate | undefined;
  resume: boolean;
  /** The largest file a download may be (issue 49). */
  maxFileBytes: number;
}

/** A command line that cannot run; the message says what to change. */
export class UsageError extends Error {}

/** The checked options; throws UsageError. */
export function checkGenerateOptions(raw: RawGenerateOptions): GenerateOptions {
  const given = (['out', 'zip', 'merged'] as const).filter((kind) => raw[kind] !== undefined);
  if (given.length !== 1)
    throw new UsageError(
      'say where the documents go with one of --out DIR (a PDF per row), --zip FILE or --merged FILE',
    );
  const kind = given[0]!;
  const path = raw[kind]!;
  if (path.trim() === '') throw new UsageError(`--${kind} needs a path`);
  if (raw.resume && kind !== 'out')
    throw new UsageError('--resume works with --out DIR: it skips the rows whose PDF is already there');
  const destination: Destination = kind === 'out' ? { kind, dir: path } : { kind, file: path };
  return {
    url: checkUrl(raw.url),
    key: required(raw.key, '--key (or PRESSROOM_API_KEY): the API key to use'),
    templateId: required(raw.template, '--template: the template id (as GET /v1/templates lists them)'),
    version:
      raw.version === undefined
        ? undefined
        : required(raw.version, '--version: a version tag or number of the template'),
    dataPath: required(raw.data, '--data: the rows file (.csv, .ndjson or .json)'),
    destination,
    filename: raw.filename === undefined ? undefined : compileFilename(raw.filename),
    resume: raw.resume === true,
    maxFileBytes: checkMaxFileMb(raw.maxFileMb) * 2 ** 20,
  };
}

function checkMaxFileMb(value: string | undefined): number {
  if (value === undefined) return DEFAULT_MAX_FILE_MB;
  const mb = Number(value);
  if (!Number.isInteger(mb) || mb < 1 || mb > 1024 * 1024)
    throw new UsageError(
      `--max-file-mb ${value}: give a whole number of MiB from 1 to 1048576 (default ${DEFAULT_MAX_FILE_MB})`,
    );
  return mb;
}

function required(value: string | undefined, what: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`missing ${what}`);
  return value;
}

function checkUrl(value: string | undefined): string {
  const text = required(value, '--url (or PRESSROOM_URL): the service, e.g. http://localhost:8080');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--url ${text}: not a URL; give the service's address, e.g. http://localhost:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--url ${text}: must be http:// or https://`);
  if (url.username || url.password)
    throw new UsageError('--url: leave credentials out of the URL; the API key goes in --key or PRESSROOM_API_KEY');
  return url.toString().replace(/\/+$/, '');
}

function compileFilename(source: string): FilenameTemplate {
  try {
    return compileFilenameTemplate(source);
  } catch (error) {
    if (error instanceof FilenameTemplateError) throw new UsageError(error.message);
    throw error;
  }
}
