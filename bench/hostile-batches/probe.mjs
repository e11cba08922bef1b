// Issue 49's hand measurements: node bench/hostile-batches/probe.mjs <baseUrl> <serverPid> <script.mjs> [args…]
// Runs a hostile client script (it exports default async (base, args) => result) in a child process while
// this one sends /healthz one request at a time (and, with PROBE_KEY, another account's GET /v1/account),
// samples the server's RSS from /proc every 50 ms and reads its longest event-loop delay from /metrics
// (prom-client's, reset at each scrape) at each phase the script names. Prints one JSON line.
import { readFileSync } from 'node:fs';
const [base, pid, script, ...rest] = process.argv.slice(2);
const rss = () => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return 0;
  }
};
let peak = rss();
const startRss = peak;
const sampler = setInterval(() => {
  peak = Math.max(peak, rss());
}, 50);
let worst = 0,
  probes = 0,
  failures = 0,
  running = true;
const phases = {};
let current = 'all';
const note = (ph, ms) => {
  phases[ph] = Math.round(Math.max(phases[ph] ?? 0, ms));
};
// The server's own longest event-loop delay (prom-client's histogram, reset at each scrape) per phase.
const loopMax = {};
const scrape = async () => {
  try {
    const t = await (await fetch(`${base}/metrics`)).text();
    return Math.round(Number(/^nodejs_eventloop_lag_max_seconds (\S+)/m.exec(t)?.[1] ?? 0) * 1000);
  } catch {
    return -1;
  }
};
await scrape();
let phaseChain = Promise.resolve();
globalThis.phase = (name) => {
  const prev = current;
  current = name;
  phaseChain = phaseChain.then(async () => {
    loopMax[prev] = Math.max(loopMax[prev] ?? 0, await scrape());
  });
};
const healthz = (async () => {
  while (running) {
    const t0 = performance.now();
    const ph = current;
    try {
      const r = await fetch(`${base}/healthz`);
      await r.text();
      if (!r.ok) failures++;
    } catch {
      failures++;
    }
    worst = Math.max(worst, performance.now() - t0);
    note(ph, performance.now() - t0);
    probes++;
    await new Promise((r) => setTimeout(r, 20));
  }
})();
// With PROBE_KEY: another account's GET /v1/account (it reads the database) probed the same way.
let worstOther = 0;
const other = (async () => {
  if (!process.env.PROBE_KEY) return;
  while (running) {
    const t0 = performance.now();
    try {
      const r = await fetch(`${base}/v1/account`, { headers: { 'x-api-key': process.env.PROBE_KEY } });
      await r.text();
      if (!r.ok) failures++;
    } catch {
      failures++;
    }
    worstOther = Math.max(worstOther, performance.now() - t0);
    await new Promise((r) => setTimeout(r, 50));
  }
})();
// The hostile client runs in a child process (runner.mjs): its own work never delays the probes.
const { spawn } = await import('node:child_process');
const { createInterface } = await import('node:readline');
const t0 = performance.now();
let result;
const child = spawn(process.execPath, [new URL('./runner.mjs', import.meta.url).pathname, script, ...rest], {
  env: { ...process.env, BASE: base },
  stdio: ['ignore', 'pipe', 'inherit'],
});
for await (const line of createInterface({ input: child.stdout })) {
  if (line.startsWith('PHASE ')) globalThis.phase(line.slice(6));
  else if (line.startsWith('RESULT ')) result = JSON.parse(line.slice(7));
}
const took = performance.now() - t0;
await new Promise((r) => setTimeout(r, 500));
globalThis.phase('end');
await phaseChain;
running = false;
await healthz;
await other;
clearInterval(sampler);
console.log(
  JSON.stringify({
    result,
    tookMs: Math.round(took),
    worstHealthzMs: Math.round(worst),
    worstHealthzMsByPhase: phases,
    worstOtherAccountMs: Math.round(worstOther),
    loopDelayMaxMsByPhase: loopMax,
    probes,
    failures,
    rssStartMB: Math.round(startRss),
    rssPeakMB: Math.round(peak),
  }),
);
