/**
 * Issue 37, case 1, measured on a real `pressroom serve` process (dist/, SQLite): a free preview whose
 * header uses a 10 MiB asset 350 times, and generated PDFs whose footer uses a 256 KiB asset 2,000 and
 * 14,000 times. Prints each answer, the process's peak RSS while it was given (sampled every 20 ms
 * from /proc), whether /healthz answers afterwards, and the balance (refusals cost nothing).
 *
 *   node --import tsx bench/bounds/header-footer-rss.ts [heap MiB]   (CASES=0,2 runs some of the three)
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { startCluster } from '../../test/support/cluster.js';
const heap = process.argv[2];
const cluster = await startCluster({
  alls: 1,
  database: 'sqlite',
  storage: 'local',
  keepLogs: false,
  env: { PRESSROOM_RENDER_CONCURRENCY: '1', ...(heap ? { NODE_OPTIONS: `--max-old-space-size=${heap}` } : {}) },
});
const serve = cluster.alls[0]!;
let exited = false;
void serve.exited.then(() => (exited = true));
/** The process's resident memory in MiB, 0 once it is gone. */
const rss = (): number => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${serve.pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return 0;
  }
};
const account = await cluster.createAccount({ credits: 10, plan: 'enterprise' });
const api = (m: string, p: string, b?: unknown) => serve.request(m, p, { apiKey: account.apiKey, body: b });
const MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
for (const [name, size] of [
  ['amp10.png', 10 * 1024 * 1024],
  ['amp256.png', 256 * 1024],
] as const) {
  const r = await api('POST', '/v1/assets', {
    name,
    content_base64: Buffer.concat([MAGIC, randomBytes(size - 8)]).toString('base64'),
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
}
const uses = (name: string, n: number) =>
  `{% for i in range(${n}) %}<i style="background:url({{ asset('${name}') }})"></i>{% endfor %}h`;
console.log(`baseline RSS ${Math.round(rss())} MiB`);
const cases: [string, () => Promise<{ status: number; body: any }>][] = [
  [
    'preview, header 350 × 10 MiB',
    () =>
      api('POST', '/v1/templates/preview', {
        html: '<p>Body</p>',
        page: { header_html: uses('amp10.png', 350), margin: { top: '20mm' } },
      }),
  ],
  ...[2000, 14000].map(
    (n) =>
      [
        `pdf/create, footer ${n} × 256 KiB`,
        async () => {
          const t = await api('POST', '/v1/templates', {
            name: 'x',
            html: '<p>Body</p>',
            page: { footer_html: uses('amp256.png', n), margin: { bottom: '20mm' } },
          });
          return api('POST', '/v1/pdf/create', { template_id: t.body.id, data: {}, export_type: 'binary' });
        },
      ] as [string, () => Promise<{ status: number; body: any }>],
  ),
];
const chosen = process.env.CASES?.split(',');
for (const [label, run] of cases.filter((_, i) => !chosen || chosen.includes(String(i)))) {
  if (exited) {
    console.log(`${label}: the process had already died`);
    continue;
  }
  let peak = rss();
  const timer = setInterval(() => (peak = Math.max(peak, rss())), 20);
  let answer: string;
  try {
    const res = await run();
    answer = `${res.status} ${JSON.stringify(res.body).slice(0, 140)}`;
  } catch (error) {
    answer = `no answer (${(error as Error).message})`;
  }
  clearInterval(timer);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const health = exited
    ? 'dead'
    : await serve.request('GET', '/healthz').then(
        (res) => String(res.status),
        () => 'no answer',
      );
  const balance = exited ? '-' : (await api('GET', '/v1/account')).body.credits;
  console.log(`${label}: ${answer}; peak RSS ${Math.round(peak)} MiB; /healthz after: ${health}; balance ${balance}`);
}
if (exited) console.log('stderr tail:', serve.stderrTail().slice(-400));
await cluster.close();
