/**
 * Cutting a JSON text into pieces and joining them gives what JSON.parse gives for the whole text:
 * random values of every shape, cut with small limits so that every path (runs, large members, large
 * scalars, nested cuts) is taken; plus the cases a value-based cut would get wrong.
 */
import { describe, expect, it } from 'vitest';
import { cutJson, joinJson, type JsonPiece } from './json-pieces.js';

/** A small deterministic generator, so a failure can be reproduced from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const STRINGS = [
  '',
  'a',
  'comma, inside',
  'bracket ] } [ {',
  'quote " and \\ backslash',
  'ünïcødé ✓',
  '\ud83d\ude00',
  'colon: "x"',
];

function randomValue(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth <= 0 || pick < 0.35) {
    const scalar = Math.floor(next() * 7);
    if (scalar === 0) return null;
    if (scalar === 1) return next() < 0.5;
    if (scalar === 2) return Math.floor(next() * 1e6) - 5e5;
    if (scalar === 3) return next() * 1e-3;
    if (scalar === 4) return 'x'.repeat(Math.floor(next() * 300));
    return STRINGS[Math.floor(next() * STRINGS.length)];
  }
  const size = Math.floor(next() * 12);
  if (pick < 0.65) return Array.from({ length: size }, () => randomValue(next, depth - 1));
  const out: Record<string, unknown> = {};
  for (let i = 0; i < size; i++)
    out[next() < 0.2 ? String(Math.floor(next() * 50)) : `${STRINGS[i % STRINGS.length]}${i}`] = randomValue(
      next,
      depth - 1,
    );
  return out;
}

/** Formats `value` as JSON with some whitespace between tokens, as clients send it. */
function loosely(value: unknown, next: () => number): string {
  const space = () => [' ', '', '\n  ', '\t'][Math.floor(next() * 4)]!;
  if (Array.isArray(value))
    return `[${space()}${value.map((v) => `${space()}${loosely(v, next)}${space()}`).join(',')}${space()}]`;
  if (value !== null && typeof value === 'object') {
    return `{${space()}${Object.entries(value)
      .map(([k, v]) => `${space()}${JSON.stringify(k)}${space()}:${space()}${loosely(v, next)}`)
      .join(',')}${space()}}`;
  }
  return JSON.stringify(value);
}

const immediately = () => Promise.resolve();

/** Every text of a cut, for checking their sizes. */
function texts(piece: JsonPiece): string[] {
  if ('text' in piece) return [piece.text];
  const runs = 'array' in piece ? piece.array : piece.object;
  return runs.flatMap((run) => ('text' in run ? [run.text] : texts(run.piece)));
}

describe('cutting and joining JSON', () => {
  it('gives back what JSON.parse gives, for random values cut with small limits', async () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const text = loosely(randomValue(next, 5), next);
      const limit = [16, 64, 200, 1000][seed % 4]!;
      const joined = await joinJson(cutJson(text, limit), immediately, limit);
      expect(joined, `seed ${seed}, limit ${limit}`).toStrictEqual(JSON.parse(text));
      // Key order too, at every level (toStrictEqual does not look at it).
      expect(JSON.stringify(joined), `key order, seed ${seed}`).toBe(JSON.stringify(JSON.parse(text)));
    }
  });

  it('keeps each run within the limit, only scalars may be larger', () => {
    const value = {
      rows: Array.from({ length: 500 }, (_, i) => ({ n: i, label: `row ${i}`, tags: ['a', 'b'] })),
      note: 'y'.repeat(5000),
    };
    const pieces = texts(cutJson(JSON.stringify(value), 1024));
    expect(pieces.length).toBeGreaterThan(20);
    for (const text of pieces) if (text.length > 1024) expect(text).toBe(JSON.stringify(value.note));
  });

  it('keeps what a re-serialization would lose: -0, number spelling, the last of duplicate keys', async () => {
    const text = `{"z":-0,"big":1e400,"dup":1,"pad":"${'p'.repeat(100)}","dup":2,"n":[1.50,${'7,'.repeat(60)}0]}`;
    const joined = (await joinJson(cutJson(text, 40), immediately, 40)) as Record<string, unknown>;
    expect(Object.is(joined.z, -0)).toBe(true);
    expect(joined).toStrictEqual(JSON.parse(text));
    expect(Object.keys(joined)).toEqual(['z', 'big', 'dup', 'pad', 'n']);
  });

  it('pauses between slices, and never inside one', async () => {
    const text = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ i })));
    let pauses = 0;
    const joined = await joinJson(cutJson(text, 256), async () => void pauses++, 256);
    expect(joined).toStrictEqual(JSON.parse(text));
    expect(pauses).toBeGreaterThan(text.length / 256 / 2);
  });

  it('leaves a short text whole', () => {
    expect(cutJson(' {"a": [1, 2]} ')).toEqual({ text: '{"a": [1, 2]}' });
  });
});
