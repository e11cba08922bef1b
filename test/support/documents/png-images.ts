/**
 * PNGs made in the test, for the document bounds: "decompression bombs" (huge, one colour, a few
 * hundred kB: issue 15's four PNGs of ~736 KB in all) and incompressible noise. zlib's run-length
 * strategy compresses 144 million identical bytes in ~0.3 s, where the default strategy takes ~3 s.
 */
import { randomBytes } from 'node:crypto';
import { constants, crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

/** An 8-bit greyscale PNG of `width` × `height` filled with one `grey` level, compressed as far as zlib goes. */
export function solidPng(width: number, height: number, grey: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  const rowBytes = width + 1;
  const raw = Buffer.alloc(rowBytes * height, grey);
  for (let y = 0; y < height; y++) raw[y * rowBytes] = 0; // filter: none
  const pixels = deflateSync(raw, { level: 9, strategy: constants.Z_RLE });
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * A 1-bit PNG of `width` × `height` white pixels: 900 megapixels in ~160 kB, and its raw rows an
 * eighth of an 8-bit image's (112 MB for 30,000 × 30,000), so it is made in a fraction of a second.
 */
export function bilevelPng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const rowBytes = Math.ceil(width / 8) + 1;
  const raw = Buffer.alloc(rowBytes * height, 0xff);
  for (let y = 0; y < height; y++) raw[y * rowBytes] = 0; // filter: none
  const pixels = deflateSync(raw, { level: 9, strategy: constants.Z_RLE });
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

/** An RGB PNG of random pixels: it compresses to nothing, in the PNG or in the PDF. */
export function noisePng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 2; // RGB
  const rowBytes = width * 3 + 1;
  const raw = randomBytes(rowBytes * height);
  for (let y = 0; y < height; y++) raw[y * rowBytes] = 0;
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** `<img>` with the PNG inline. */
export function dataUri(png: Buffer): string {
  return `data:image/png;base64,${png.toString('base64')}`;
}
