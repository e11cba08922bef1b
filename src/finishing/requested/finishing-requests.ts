/**
 * The finishing a request may ask for — `watermark`, `metadata`, `protect` — as `POST /v1/pdf/create`,
 * `/create-async` and the PDF tools take them (docs/finishing.md). Field names follow the API's
 * snake_case; the schema checks shapes, the finishing modules check the rest before any charge.
 */
import { Type, type Static } from 'typebox';

const enumOf = <const T extends readonly string[]>(values: T, options: { description: string; default?: T[number] }) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const WATERMARK_POSITIONS = [
  'center',
  'top-left',
  'top',
  'top-right',
  'left',
  'right',
  'bottom-left',
  'bottom',
  'bottom-right',
] as const;

/** Text without control characters (a line break would not be drawn). */
const PLAIN_TEXT = '^[^\\u0000-\\u001f\\u007f]*$';

export const WatermarkSchema = Type.Object(
  {
    text: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: PLAIN_TEXT,
        description:
          'The text to draw, one line, in any script the fonts cover: Latin, Greek, Cyrillic, Georgian, Armenian, Chinese, Japanese and Korean drawn in an embedded font; Arabic, Hebrew, Indic, Thai and other scripts that need shaping laid out by Chromium (docs/finishing.md). Give text or asset',
      }),
    ),
    asset: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "Name of a PNG, JPEG or PDF in your asset library (POST /v1/assets): an image drawn at 1 px = 1 pt, a PDF's first page as vector content at its size, shrunk to fit 80 % of the page; a PDF not on a PDF/A document. Give text or asset",
      }),
    ),
    opacity: Type.Optional(
      Type.Number({
        minimum: 0.05,
        maximum: 1,
        default: 0.3,
        description: 'From 0.05 (faint) to 1 (opaque); default 0.3',
      }),
    ),
    rotation: Type.Optional(
      Type.Number({
        minimum: -360,
        maximum: 360,
        default: 45,
        description: "Degrees counter-clockwise about the mark's centre; default 45 (reading up the page)",
      }),
    ),
    font_size: Type.Optional(
      Type.Number({ minimum: 4, maximum: 400, default: 48, description: 'Text size in points; default 48. Text only' }),
    ),
    color: Type.Optional(
      Type.String({
        pattern: '^#[0-9A-Fa-f]{6}$',
        default: '#808080',
        description: 'Text colour as #RRGGBB; default #808080 (grey). Text only',
      }),
    ),
    position: Type.Optional(
      enumOf(WATERMARK_POSITIONS, {
        default: 'center',
        description:
          'Where on the page: center (default), a corner (top-left, …) or an edge (top, left, …), 24 pt inside the page',
      }),
    ),
    pages: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 10_000,
        description:
          'Pages to mark, 1-based numbers and ranges such as "1-3, 5"; default every page. On a generated document a page past its end is skipped; a PDF tool answers 422',
      }),
    ),
    layer: Type.Optional(
      enumOf(['over', 'under'] as const, {
        default: 'over',
        description:
          "`over` (default): on top of the page's content; `under`: behind it (hidden where the page paints an opaque background)",
      }),
    ),
  },
  { description: 'A watermark: text or an image asset, on every page or the pages named' },
);
export type WatermarkRequest = Static<typeof WatermarkSchema>;

const infoText = (description: string) =>
  Type.Optional(Type.String({ maxLength: 1000, pattern: PLAIN_TEXT, description }));

export const MetadataSchema = Type.Object(
  {
    title: infoText(
      "Title (Info /Title; a PDF viewer's window title). Default: the document's <title>, else the template's name",
    ),
    author: infoText('Author (Info /Author)'),
    subject: infoText('Subject (Info /Subject)'),
    keywords: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: PLAIN_TEXT, description: 'One keyword' }), {
        maxItems: 50,
        description: 'Keywords (Info /Keywords, written separated by ", ")',
      }),
    ),
    creator: infoText('Creator: the application the content came from (Info /Creator). Default: Pressroom'),
  },
  {
    description:
      'Document information shown by PDF viewers and search tools (pdfinfo); with PDF/A also written to the XMP',
  },
);
export type MetadataRequest = Static<typeof MetadataSchema>;

/**
 * A password qpdf can take: no control characters (passed in a file, one per line) and no leading
 * `-` (qpdf would read it as an option); AES-256 uses the first 127 bytes of its UTF-8.
 */
const password = (description: string, minLength: number) =>
  Type.String({
    minLength,
    maxLength: 127,
    pattern: '^(?!-)[^\\u0000-\\u001f\\u007f]*$',
    description,
    writeOnly: true,
  });

export const ProtectSchema = Type.Object(
  {
    user_password: Type.Optional(
      password(
        'Password needed to open the document; omit it to let anyone open it (the permissions still apply). Never echoed or logged',
        0,
      ),
    ),
    owner_password: password(
      'Password that lifts the permissions; required, and different from user_password. Never echoed or logged',
      1,
    ),
    permissions: Type.Optional(
      Type.Object(
        {
          printing: Type.Optional(
            enumOf(['high', 'low', 'none'] as const, {
              default: 'high',
              description: 'high (default): print at full quality; low: a low-resolution print only; none',
            }),
          ),
          copying: Type.Optional(
            Type.Boolean({
              default: false,
              description: 'Copy text and images out (default false). Screen readers may always extract text',
            }),
          ),
          modifying: Type.Optional(
            Type.Boolean({
              default: false,
              description: 'Change the content and assemble pages: insert, rotate, delete (default false)',
            }),
          ),
          annotating: Type.Optional(
            Type.Boolean({ default: false, description: 'Add or change comments (default false)' }),
          ),
          filling_forms: Type.Optional(
            Type.Boolean({ default: true, description: 'Fill in form fields (default true)' }),
          ),
        },
        { description: 'What a reader may do without the owner password' },
      ),
    ),
  },
  { description: 'AES-256 encryption with permissions (qpdf). Not with PDF/A, which forbids encryption' },
);
export type ProtectRequest = Static<typeof ProtectSchema>;
