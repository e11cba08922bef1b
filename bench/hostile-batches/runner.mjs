// runner.mjs <script> [args]: runs a hostile script in its own process (so its client work never delays the probe); prints PHASE lines and the result.
const [script, ...rest] = process.argv.slice(2);
globalThis.phase = (name) => console.log(`PHASE ${name}`);
const mod = await import(new URL(script, import.meta.url).href);
let result;
try {
  result = await mod.default(process.env.BASE, rest);
} catch (e) {
  result = { error: String(e) };
}
console.log(`RESULT ${JSON.stringify(result)}`);
