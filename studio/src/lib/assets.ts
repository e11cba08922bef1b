/** The asset library's names, addresses and template snippets (issue 13). Pure, no DOM. */
import type { AssetInfo } from './api-types.js';

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
