// Issue 51's code figures of a checkout: node bench/code-figures.mjs <tree> (src/, non-test .ts, read with the TypeScript API).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createRequire } from 'node:module';
const tree = process.argv[2];
const ts = createRequire(import.meta.url)('typescript');
const files = [];
const walk = (d) => {
  for (const n of readdirSync(d)) {
    const p = join(d, n);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.d.ts')) files.push(p);
  }
};
walk(join(tree, 'src'));
let lines = 0,
  long = 0,
  largest = ['', 0],
  fnLargest = ['', 0],
  over60 = 0,
  over3 = 0;
for (const f of files) {
  const text = readFileSync(f, 'utf8');
  const ls = text.split('\n');
  lines += ls.length;
  long += ls.filter((l) => l.length > 120).length;
  if (ls.length > largest[1]) largest = [relative(tree, f), ls.length];
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const a = sf.getLineAndCharacterOfPosition(node.getStart()).line,
        b = sf.getLineAndCharacterOfPosition(node.end).line;
      const n = b - a + 1;
      if (n > 60) over60++;
      if (n > fnLargest[1]) fnLargest = [`${relative(tree, f)}:${a + 1} ${node.name?.getText?.() ?? '(anonymous)'}`, n];
      if (node.parameters.length > 3) over3++;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
console.log(
  JSON.stringify(
    {
      files: files.length,
      lines,
      linesOver120: long,
      largestFile: largest,
      largestFunction: fnLargest,
      functionsOver60Lines: over60,
      functionsOver3Params: over3,
    },
    null,
    1,
  ),
);
