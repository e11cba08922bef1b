/**
 * What an asset (or a remote resource) is, taken from its bytes, never from its name or a declared
 * type: magic numbers for the binary formats, content sniffing for SVG and CSS. The same rules
 * decide what the asset library accepts and what a remote resource may be.
 */

/** Media types the asset library stores and documents may load. */
export const ASSET_CONTENT_TYPES = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/svg+xml',
  'font/woff2',
  'font/woff',
  'font/ttf',
  'font/otf',
  'text/css',
  // A PDF is an asset for watermarks only (docs/finishing.md): documents never load one (isDocumentResourceType).
  'application/pdf',
] as const;
export type AssetContentType = (typeof ASSET_CONTENT_TYPES)[number];

/** What a document may load, from the asset library or the web: every asset type but a PDF. */
export function isDocumentResourceType(type: string): boolean {
  return type !== 'application/pdf';
}

function startsWith(bytes: Buffer, signature: number[], offset = 0): boolean {
  if (bytes.length < offset + signature.length) return false;
  return signature.every((byte, i) => bytes[offset + i] === byte);
}

function ascii(bytes: Buffer, offset: number, text: string): boolean {
  return bytes.length >= offset + text.length && bytes.toString('latin1', offset, offset + text.length) === text;
}

/** The binary formats, by their magic numbers. */
function binaryType(bytes: Buffer): AssetContentType | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return 'image/gif';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return 'image/webp';
  if (ascii(bytes, 0, 'wOF2')) return 'font/woff2';
  if (ascii(bytes, 0, 'wOFF')) return 'font/woff';
  if (ascii(bytes, 0, 'OTTO')) return 'font/otf';
  // TrueType: version 1.0, or Apple's 'true'; a TrueType collection ('ttcf') too.
  if (startsWith(bytes, [0x00, 0x01, 0x00, 0x00]) || ascii(bytes, 0, 'true') || ascii(bytes, 0, 'ttcf'))
    return 'font/ttf';
  // A PDF whole to its end-of-file marker (a cut or stray header is not one); its pages are read when it is drawn.
  if (ascii(bytes, 0, '%PDF-') && bytes.subarray(-1024).includes('%%EOF')) return 'application/pdf';
  return undefined;
}

/** The start of a text without NUL bytes that decodes as UTF-8 (a BOM is allowed). */
function asText(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    // `stream`: a multi-byte character cut at the end of the prefix is not an error.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true }).replace(/^\uFEFF/, '');
  } catch {
    return undefined;
  }
}

/** An `<svg` root element, after an optional XML declaration, comments and a doctype. */
const SVG_START = /^\s*(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*|<!doctype[^>]*>\s*)*<svg[\s>]/i;
/** CSS starts with a rule, an at-rule or a comment; markup never passes (`<` first). */
const CSS_START =
  /^\s*(\/\*|@(charset|import|font-face|media|page|supports|layer|namespace|keyframes|property|font-feature-values)\b|[:.#*a-z[][^{<]*\{)/i;

/**
 * The media type of `bytes`, or undefined when it is none of ASSET_CONTENT_TYPES. SVG and CSS are
 * told apart from other text by how they start; anything with markup other than an `<svg>` root is
 * not CSS (HTML is refused).
 */
export function sniffAssetType(bytes: Buffer): AssetContentType | undefined {
  const binary = binaryType(bytes);
  if (binary) return binary;
  const text = asText(bytes.subarray(0, 4096));
  if (text === undefined) return undefined;
  if (SVG_START.test(text)) return 'image/svg+xml';
  if (CSS_START.test(text) && !/<\/?(html|head|body|script|div|p)\b/i.test(text)) return 'text/css';
  return undefined;
}

/** Fonts, by media type (the ones documents load through `@font-face`). */
export function isFontType(type: string): boolean {
  return type.startsWith('font/');
}
