/**
 * Reading the totals of a customer's own e-invoice XML (src/einvoice/xml/stated-totals.ts) at the largest
 * size the service takes (`einvoice.xml`, 5 Mi characters): the sample invoice as XRechnung UBL padded
 * with minimal invoice lines (UBL is not checked against an XSD, so a line can be this small: the most
 * lines, hence the most amounts to add up, a document of that size can hold). Prints, per round, the
 * time readStatedTotals took, the longest gap of the event loop meanwhile (the part that runs on the
 * server's thread: reading and adding the listed amounts), and the sum of the lines it read, which
 * the exact value (printed first) must equal.
 *
 * `node --import tsx bench/costs/einvoice-stated-totals.ts [--rounds 3] [--amount 1234567.89]`
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Exact } from '../../src/einvoice/decimals.js';
import { buildEInvoice } from '../../src/einvoice/einvoice.js';
import { SUPPLIED_XML_MAX_CHARS } from '../../src/einvoice/invoice-schema.js';
import { readStatedTotals } from '../../src/einvoice/xml/stated-totals.js';
import { closeXmlChecks } from '../../src/einvoice/xmllint/xml-schema-check.js';
import { SAMPLE_INVOICE } from '../../test/support/documents/einvoice-samples.js';
import { watchLoopGap } from '../loop-gap.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, amount: { type: 'string', default: '1234567.89' } },
});
const rounds = Number(values.rounds);
const amount = values.amount!;

const base = (await buildEInvoice({ format: 'xrechnung-ubl', invoice: SAMPLE_INVOICE }, { accountId: 'bench' })).xml;
const line = `<cac:InvoiceLine><cbc:LineExtensionAmount currencyID="EUR">${amount}</cbc:LineExtensionAmount></cac:InvoiceLine>\n`;
const extra = Math.floor((SUPPLIED_XML_MAX_CHARS - base.length) / line.length);
const xml = base.replace('</Invoice>', `${line.repeat(extra)}</Invoice>`);
const exact = new Exact(amount).times(extra).plus('1284.60');
console.log(
  `${xml.length} characters, ${extra + SAMPLE_INVOICE.lines.length} lines; their exact sum ${exact.toFixed(2)}`,
);

await readStatedTotals(base, 'ubl', 'bench');
for (let round = 1; round <= rounds; round++) {
  const loop = watchLoopGap();
  const started = performance.now();
  const stated = await readStatedTotals(xml, 'ubl', 'bench');
  const took = performance.now() - started;
  const gap = loop.stop();
  console.log(
    `round ${round}: ${took.toFixed(0)} ms, longest event-loop gap ${gap.toFixed(0)} ms, lines ${stated.lineCount}, their sum read ${stated.lineSum?.toFixed(2) ?? 'none'}`,
  );
}
await closeXmlChecks();
