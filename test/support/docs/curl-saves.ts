/**
 * The one static rule the docs test checks in every shell block, run or not (issue 50): a `curl` that
 * saves the answer to a file (`-o FILE`, `-O`, `> FILE`) fails on an error answer (`-f`, `--fail`,
 * `--fail-with-body`), so a refusal is never saved as `document.pdf` for the reader to open.
 * A small shell-word reader: quotes, `$( … )` (read again for the commands inside), comments,
 * line continuations and the operators that end a command.
 */

type Word = { text: string; inner: string[] };

/** The `curl` commands of `script` that save a file without failing on an error answer. */
export function curlsSavingWithoutFail(script: string): string[] {
  const offending: string[] = [];
  for (const command of commandsOf(script)) {
    const words = command.map((w) => w.text);
    for (const w of command) for (const inner of w.inner) offending.push(...curlsSavingWithoutFail(inner));
    const at = words.findIndex((w) => !/^(until|while|if|then|do|!|time|[A-Za-z_][A-Za-z0-9_]*=.*)$/.test(w));
    if (words[at] !== 'curl') continue;
    const args = words.slice(at + 1);
    const toFile = (target: string | undefined) => target !== undefined && target !== '/dev/null';
    const saves = args.some(
      (a, i) =>
        ((a === '-o' || a === '--output' || a === '>' || a === '>>') && toFile(args[i + 1])) ||
        (/^>>?[^>&]/.test(a) && toFile(a.replace(/^>>?/, ''))) ||
        a === '-O' ||
        a === '--remote-name',
    );
    const fails = args.some((a) => a === '--fail' || a === '--fail-with-body' || /^-[A-Za-z]*f[A-Za-z]*$/.test(a));
    if (saves && !fails) offending.push(words.slice(at).join(' ').slice(0, 160));
  }
  return offending;
}

/** The simple commands of a script, as lists of words. */
function commandsOf(script: string): Word[][] {
  const commands: Word[][] = [];
  let current: Word[] = [];
  let word: Word | undefined;
  const end = () => {
    if (word) current.push(word);
    word = undefined;
  };
  const split = () => {
    end();
    if (current.length > 0) commands.push(current);
    current = [];
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (c === '\\' && script[i + 1] === '\n') {
      i++;
      continue;
    }
    if (c === '#' && !word) {
      while (i < script.length && script[i] !== '\n') i++;
      split();
      continue;
    }
    if (c === ' ' || c === '\t') {
      end();
      continue;
    }
    if (c === '\n' || c === ';' || c === '|' || c === '&' || c === '(' || c === ')') {
      split();
      continue;
    }
    word ??= { text: '', inner: [] };
    if (c === "'") {
      const close = script.indexOf("'", i + 1);
      word.text += script.slice(i + 1, close < 0 ? undefined : close);
      i = close < 0 ? script.length : close;
    } else if (c === '"') {
      let j = i + 1;
      while (j < script.length && script[j] !== '"') {
        if (script[j] === '\\') j++;
        else if (script.startsWith('$(', j)) {
          const close = matchingParen(script, j + 1);
          word.inner.push(script.slice(j + 2, close));
          j = close;
        }
        j++;
      }
      word.text += script.slice(i + 1, j);
      i = j;
    } else if (c === '$' && script[i + 1] === '(') {
      const close = matchingParen(script, i + 1);
      word.inner.push(script.slice(i + 2, close));
      word.text += script.slice(i, close + 1);
      i = close;
    } else if (c === '\\') {
      word.text += script[i + 1] ?? '';
      i++;
    } else {
      word.text += c;
    }
  }
  split();
  return commands;
}

/** The index of the `)` closing the `(` at `open`, past quotes and nested parentheses. */
function matchingParen(script: string, open: number): number {
  let depth = 0;
  for (let i = open; i < script.length; i++) {
    const c = script[i]!;
    if (c === "'") i = script.indexOf("'", i + 1);
    else if (c === '"') {
      for (i++; i < script.length && script[i] !== '"'; i++) if (script[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
    if (i < 0) break;
  }
  return script.length;
}
