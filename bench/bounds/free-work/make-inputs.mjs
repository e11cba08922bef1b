// The inputs of the issue-49 free-work measurements (README.md beside this file), written to $WORK:
// a-big.json (a 5 MB, 3,300-line UBL), b-small.json (a 6.7 KB official example), noise-{tall,box,huge}.json
// (templates with an 800 px wide page of noise, 20,000 / 1,600 / 100,000 px tall), one.csv (one row).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';

const work = process.env.WORK ?? '/tmp/pressroom-free-work';
const example = join(
  process.env.RULES ?? '../shared/einvoice-rules',
  'xrechnung-testsuite-2026-01-31/src/test/business-cases/standard/01.01a-INVOICE_ubl.xml',
);
mkdirSync(work, { recursive: true });

const small = readFileSync(example, 'utf8');
const line = /<cac:InvoiceLine>[\s\S]*?<\/cac:InvoiceLine>/.exec(small)[0];
const pad = Math.floor((5_200_000 - small.length) / 3300) - line.length - 40;
let id = 0;
const big = small.replace(
  line,
  Array.from({ length: 3300 }, () =>
    line.replace(/<cbc:ID>[^<]*<\/cbc:ID>/, () => `<cbc:ID>${++id}</cbc:ID><cbc:Note>${'x'.repeat(pad)}</cbc:Note>`),
  ).join('\n'),
);
writeFileSync(join(work, 'a-big.json'), JSON.stringify({ xml: big }));
writeFileSync(join(work, 'b-small.json'), JSON.stringify({ xml: small }));

const chunk = (type, data) => {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, crc]);
};
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(256, 0);
ihdr.writeUInt32BE(256, 4);
ihdr.set([8, 2, 0, 0, 0], 8);
const rows = Buffer.concat(Array.from({ length: 256 }, () => Buffer.concat([Buffer.from([0]), randomBytes(256 * 3)])));
const png = Buffer.concat([
  Buffer.from('89504e470d0a1a0a', 'hex'),
  chunk('IHDR', ihdr),
  chunk('IDAT', deflateSync(rows)),
  chunk('IEND', Buffer.alloc(0)),
]);
const css = `html,body{margin:0;height:100%} div{height:100%;background:url(data:image/png;base64,${png.toString('base64')}) repeat}`;
for (const [name, height] of [
  ['tall', '20000px'],
  ['box', '1600px'],
  ['huge', '100000px'],
]) {
  writeFileSync(
    join(work, `noise-${name}.json`),
    JSON.stringify({
      name: `noise ${name}`,
      html: '<div></div>',
      css,
      page: { width: '800px', height, margin: { top: '0', right: '0', bottom: '0', left: '0' } },
    }),
  );
}
writeFileSync(join(work, 'one.csv'), 'name\nAda\n');
console.log(`inputs in ${work}: UBL ${big.length} characters, ${id} lines`);
