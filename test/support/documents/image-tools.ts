/**
 * Reading images in tests without an image library: the format and pixel size from the file header
 * (PNG, JPEG, WebP), PNG pixels (zlib + the five PNG row filters), and a solid-colour PNG to serve.
 */
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';

export interface ImageInfo {
  format: 'png' | 'jpeg' | 'webp';
  width: number;
  height: number;
}

/** Format and size from the header; throws for anything else. */
export function imageInfo(bytes: Buffer): ImageInfo {
  if (bytes.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex'))) {
    return { format: 'png', width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return { format: 'jpeg', ...jpegSize(bytes) };
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP')
    return { format: 'webp', ...webpSize(bytes) };
  throw new Error(`not a PNG, JPEG or WebP file (starts with ${bytes.subarray(0, 8).toString('hex')})`);
}

function jpegSize(bytes: Buffer): { width: number; height: number } {
  let offset = 2;
  while (offset + 9 < bytes.length) {
    if (bytes[offset] !== 0xff) throw new Error('corrupt JPEG marker');
    const marker = bytes[offset + 1]!;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    offset += 2 + bytes.readUInt16BE(offset + 2);
  }
  throw new Error('JPEG without a frame header');
}

function webpSize(bytes: Buffer): { width: number; height: number } {
  const chunk = bytes.subarray(12, 16).toString('latin1');
  if (chunk === 'VP8 ') return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = bytes.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
  throw new Error(`unknown WebP chunk ${chunk}`);
}

/** A decoded 8-bit PNG: `pixel(x, y)` is [r, g, b, a]. */
export interface DecodedPng {
  width: number;
  height: number;
  pixel(x: number, y: number): [number, number, number, number];
}

/** Decodes a non-interlaced 8-bit greyscale, RGB or RGBA PNG (what Chromium writes). */
export function decodePng(bytes: Buffer): DecodedPng {
  const { width, height } = imageInfo(bytes);
  const bitDepth = bytes[24]!;
  const colorType = bytes[25]!;
  const channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[colorType];
  if (bitDepth !== 8 || channels === undefined || bytes[28] !== 0)
    throw new Error(`unsupported PNG (depth ${bitDepth}, colour type ${colorType}, interlace ${bytes[28]})`);
  const idat: Buffer[] = [];
  for (let offset = 8; offset < bytes.length; ) {
    const length = bytes.readUInt32BE(offset);
    if (bytes.subarray(offset + 4, offset + 8).toString('latin1') === 'IDAT')
      idat.push(bytes.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y += 1) {
    const filter = raw[y * (stride + 1)]!;
    for (let i = 0; i < stride; i += 1) {
      const value = raw[y * (stride + 1) + 1 + i]!;
      const left = i >= channels ? out[y * stride + i - channels]! : 0;
      const up = y > 0 ? out[(y - 1) * stride + i]! : 0;
      const upLeft = y > 0 && i >= channels ? out[(y - 1) * stride + i - channels]! : 0;
      const predictor = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter];
      if (predictor === undefined) throw new Error(`bad PNG filter ${filter}`);
      out[y * stride + i] = (value + predictor) & 0xff;
    }
  }
  return {
    width,
    height,
    pixel(x, y) {
      const at = y * stride + x * channels;
      if (channels === 1 || channels === 2) return [out[at]!, out[at]!, out[at]!, channels === 2 ? out[at + 1]! : 255];
      return [out[at]!, out[at + 1]!, out[at + 2]!, channels === 4 ? out[at + 3]! : 255];
    },
  };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** How many pixels satisfy `test`. */
export function countPixels(png: DecodedPng, test: (rgba: [number, number, number, number]) => boolean): number {
  let count = 0;
  for (let y = 0; y < png.height; y += 1) for (let x = 0; x < png.width; x += 1) if (test(png.pixel(x, y))) count += 1;
  return count;
}

/** A solid-colour RGB PNG. */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const row = Buffer.from(Array.from({ length: width }, () => rgb).flat());
  return rgbPng(width, height, () => row);
}

/** An RGB PNG of random pixels: what compresses least (a picture of it stays as large as its pixels). */
export function noisePng(width: number, height: number): Buffer {
  return rgbPng(width, height, () => randomBytes(width * 3));
}

/** An RGB PNG whose row y is `row(y)` (width × 3 bytes). */
function rgbPng(width: number, height: number, row: (y: number) => Buffer): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', header),
    chunk(
      'IDAT',
      deflateSync(Buffer.concat(Array.from({ length: height }, (_, y) => Buffer.concat([Buffer.from([0]), row(y)])))),
    ),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
