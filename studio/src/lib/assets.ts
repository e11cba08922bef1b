/** The asset library's names, addresses and template snippets (issue 13). Pure, no DOM. */
import type { AssetInfo, AssetUser } from './api-types.js';

/** The API address of an asset: each `/`-separated part of its name encoded, the slashes kept. */
export function assetPath(name: string): string {
  return `/v1/assets/${name.split('/').map(encodeURIComponent).join('/')}`;
}

/** What a template writes to use the asset. */
export function assetSnippet(name: string): string {
  return `{{ asset('${name}') }}`;
}

/** image, font, stylesheet, or other — from the type the server took from the bytes. */
export function assetKind(contentType: string): 'image' | 'font' | 'css' | 'other' {
  if (contentType.startsWith('image/')) return 'image';
  if (contentType.startsWith('font/') || /font/.test(contentType)) return 'font';
  if (contentType === 'text/css') return 'css';
  return 'other';
}

/** What kind of file an asset is, in words (the card's line: "PNG image", not "image/png"). */
export function assetTypeWords(contentType: string): string {
  const subtype = (contentType.split('/')[1] ?? '').replace(/^(x-|vnd\.ms-|font-)/, '').replace(/\+xml$/, '');
  const named: Record<string, string> = {
    svg: 'SVG image',
    jpeg: 'JPEG image',
    png: 'PNG image',
    gif: 'GIF image',
    webp: 'WebP image',
    avif: 'AVIF image',
    woff: 'WOFF font',
    woff2: 'WOFF2 font',
    ttf: 'TrueType font',
    otf: 'OpenType font',
    fontobject: 'Embedded OpenType font',
    sfnt: 'Font',
    css: 'Stylesheet',
  };
  if (named[subtype]) return named[subtype];
  const kind = assetKind(contentType);
  return kind === 'image' ? 'Image' : kind === 'font' ? 'Font' : kind === 'css' ? 'Stylesheet' : 'File';
}

/** A ready-to-paste use of the asset: an <img> for an image, an @font-face rule for a font. */
export function assetUsageExample(asset: Pick<AssetInfo, 'name' | 'content_type'>): string | null {
  const kind = assetKind(asset.content_type);
  if (kind === 'image') return `<img src="${assetSnippet(asset.name)}" alt="">`;
  if (kind === 'font') {
    const family = asset.name.replace(/^.*\//, '').replace(/\.[^.]+$/, '');
    return `@font-face { font-family: "${family}"; src: url("${assetSnippet(asset.name)}"); }`;
  }
  if (kind === 'css') return `<link rel="stylesheet" href="${assetSnippet(asset.name)}">`;
  return null;
}

/**
 * The asset name for an uploaded file: its file name with every character the API refuses (names
 * are letters, digits, `.`, `_`, `-`, `/`) turned into `-`, at most 200 characters.
 */
export function assetNameFor(fileName: string): string {
  const cleaned = fileName
    .replace(/[^A-Za-z0-9._\/-]+/g, '-')
    .replace(/^[-/]+/, '')
    .slice(0, 200);
  return cleaned || 'asset';
}

/** "12.3 KB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** How one template uses an asset: "draft, v1 prints revision 1". */
export function assetUseText(user: AssetUser): string {
  const draft = user.draft ? [user.computed ? 'draft (it computes asset names, so it may use this one)' : 'draft'] : [];
  return [...draft, ...user.versions.map((v) => `${v.tag} prints revision ${v.revision}`)].join(', ');
}

/** The question before uploading a file under a name the account has (issue 50): who uses it, and what changes for them. */
export function replaceQuestion(asset: Pick<AssetInfo, 'name' | 'used_by'>): { title: string; message: string } {
  const users = asset.used_by ?? [];
  const title = `Replace ${asset.name}?`;
  if (users.length === 0)
    return { title, message: `${asset.name} already exists; no template uses it. The new file takes its place.` };
  const named = users.slice(0, 3).map((u) => u.template_name);
  const list =
    users.length > named.length ? `${named.join(', ')} and ${users.length - named.length} more` : named.join(', ');
  return {
    title,
    message: `${asset.name} is used by ${users.length === 1 ? '1 template' : `${users.length} templates`} (${list}). Their drafts will print the new file; published versions keep printing the file they were published with.`,
  };
}
