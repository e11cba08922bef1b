import { describe, expect, it } from 'vitest';
import { checkGenerateOptions, UsageError, type RawGenerateOptions } from './generate-options.js';

const base: RawGenerateOptions = {
  url: 'http://localhost:8080/',
  key: 'pk_test',
  template: 'tpl_1',
  data: 'rows.csv',
  out: 'out',
};

describe('generate options', () => {
  it('takes a complete command line', () => {
    const options = checkGenerateOptions({ ...base, version: 'v3', filename: '{{ n }}', resume: true });
    expect(options).toMatchObject({
      url: 'http://localhost:8080',
      key: 'pk_test',
      templateId: 'tpl_1',
      version: 'v3',
      dataPath: 'rows.csv',
      destination: { kind: 'out', dir: 'out' },
      resume: true,
    });
    expect(options.filename?.nameFor({ n: 4 })).toBe('4');
  });

  it.each([
    [{ ...base, out: undefined }, 'say where the documents go'],
    [{ ...base, zip: 'a.zip' }, 'say where the documents go'],
    [{ ...base, out: undefined, zip: 'a.zip', merged: 'a.pdf' }, 'say where the documents go'],
    [{ ...base, out: ' ' }, '--out needs a path'],
    [{ ...base, out: undefined, zip: 'a.zip', resume: true }, '--resume works with --out DIR'],
    [{ ...base, url: undefined }, 'missing --url (or PRESSROOM_URL)'],
    [{ ...base, url: 'localhost:8080' }, 'must be http:// or https://'],
    [{ ...base, url: 'not a url' }, 'not a URL'],
    [{ ...base, url: 'http://user:secret@localhost' }, 'leave credentials out of the URL'],
    [{ ...base, key: '' }, 'missing --key (or PRESSROOM_API_KEY)'],
    [{ ...base, template: undefined }, 'missing --template'],
    [{ ...base, data: undefined }, 'missing --data'],
    [{ ...base, filename: '{{ a | upper }}' }, 'only {{ dotted.key }}'],
  ])('refuses %j: %s', (raw, message) => {
    expect(() => checkGenerateOptions(raw)).toThrow(UsageError);
    expect(() => checkGenerateOptions(raw)).toThrow(message);
  });

  it('never repeats the key in a message', () => {
    const attempt = () => checkGenerateOptions({ ...base, key: 'pk_live_secret', url: 'ftp://x' });
    expect(attempt).toThrow(UsageError);
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).not.toContain('pk_live_secret');
    }
  });
});
