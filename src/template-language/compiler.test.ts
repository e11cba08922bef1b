import { describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors.js';
import { compileTemplate, MAX_TEMPLATE_SOURCE_CHARS } from './compiler.js';

function syntaxError(source: string): AppError {
  try {
    compileTemplate(source);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a syntax error');
}

describe('compileTemplate', () => {
  it('compiles Jinja2 syntax to code without running it', () => {
    // Would throw in Node if executed; compiling must not execute anything.
    const code = compileTemplate(
      '{{ range.constructor("throw new Error(\'ran in node\')")() }}{% for x in items[1:3] %}{{ x }}{% endfor %}',
    );
    expect(code).toContain('root');
    expect(typeof code).toBe('string');
  });

  it.each([
    ['unknown tag', 'Hello\n{% endfor %}', 2, /unknown block tag: endfor/],
    ['missing expression', 'a\nb\n  {% for x in %}', 3, /unexpected token/],
    ['dangling filter', '{{ x | }}', 1, /expected symbol/],
    ['unclosed if at end of file', 'one\ntwo\n{% if x %}open', 3, /endif|end of file/],
    ['unclosed call at end of input', 'hello\n{{ foo(', 2, /unexpected end of template/],
  ])('reports %s as TEMPLATE_SYNTAX_ERROR with the line', (_name, source, line, message) => {
    const error = syntaxError(source);
    expect(error.code).toBe('TEMPLATE_SYNTAX_ERROR');
    expect(error.details?.line).toBe(line);
    expect(error.message).toMatch(message);
    expect(error.message).not.toMatch(/\/work|node_modules|at .*\.js/);
  });

  it('turns stack exhaustion from deep nesting into a syntax error', () => {
    const error = syntaxError(`{{ ${'('.repeat(50_000)}1${')'.repeat(50_000)} }}`);
    expect(error.code).toBe('TEMPLATE_SYNTAX_ERROR');
    expect(error.message).toMatch(/nested too deeply/);
  });

  it('refuses templates above the size cap before parsing them', () => {
    const error = syntaxError('x'.repeat(MAX_TEMPLATE_SOURCE_CHARS + 1));
    expect(error.message).toMatch(/longer than 2000000 characters/);
  });

  it('caches by source text', () => {
    const source = `{{ cached_${Date.now()} }}`;
    expect(compileTemplate(source)).toBe(compileTemplate(source));
  });

  it.each([
    ['an unknown filter', 'Total\n  {{ amount | money }}', 'filter', 'money', 2, 15],
    ['an unknown filter after a known one', '{{ name | upper | shout }}', 'filter', 'shout', 1, 19],
    ['an unknown filter block', 'a\n{% filter loud %}x{% endfilter %}', 'filter', 'loud', 2, 11],
    ['an unknown test', '{% if x is positive %}y{% endif %}', 'test', 'positive', 1, 12],
  ])(
    'refuses %s at its own line and column (issue 13: it used to save, then fail at generation)',
    (_name, source, kind, name, line, column) => {
      const error = syntaxError(source);
      expect(error.code).toBe('TEMPLATE_SYNTAX_ERROR');
      expect(error.details).toEqual({ line, column });
      expect(error.message).toContain(`unknown ${kind} "${name}"`);
    },
  );
});
