/** Page selections and rotation maps: what each reads as, and the 422 each mistake gets. */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../shared/errors.js';
import { planRotation, rotationsFor } from './page-rotations.js';
import { parsePageSelection, selectedPages } from '../pdf/page-selection.js';
import { pageRangeArgument } from '../pdf/qpdf.js';

function refusal(work: () => unknown): { loc: (string | number)[]; msg: string; type: string } {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues[0]!;
  }
  throw new Error('expected a refusal');
}

describe('page selections', () => {
  it.each([
    ['1-3, 5', 10, [1, 2, 3, 5]],
    ['3, 1-2', 3, [3, 1, 2]],
    ['5,1,3', 5, [5, 1, 3]],
    ['5-3', 5, [5, 4, 3]],
    [' 2 , 2 ', 2, [2, 2]],
    ['4 - 4', 4, [4]],
  ])('%j of %i pages → %j', (text, count, pages) => {
    expect(selectedPages(parsePageSelection(text), count, 100)).toEqual(pages);
  });

  it.each([
    ['', 'pages is empty'],
    [' , ', 'pages is empty'],
    ['1,,2', 'empty item'],
    ['1-', '"1-" is not a page number'],
    ['a', '"a" is not a page number'],
    ['1-2-3', '"1-2-3" is not a page number'],
    ['-1', '"-1" is not a page number'],
    ['1.5', '"1.5" is not a page number'],
    ['0-2', 'numbered from 1'],
  ])('refuses %j before any download', (text, message) => {
    expect(refusal(() => parsePageSelection(text))).toMatchObject({
      loc: ['body', 'pages'],
      msg: expect.stringContaining(message),
      type: 'pages_invalid',
    });
  });

  it('refuses pages outside the document and selections over the page bound', () => {
    expect(refusal(() => selectedPages(parsePageSelection('2, 4'), 3, 100))).toMatchObject({
      msg: 'page 4 is outside the document, which has 3 pages',
      type: 'page_out_of_range',
    });
    expect(refusal(() => selectedPages(parsePageSelection('1-2'), 1, 100)).msg).toBe(
      'the range 1-2 is outside the document, which has 1 page',
    );
    expect(refusal(() => selectedPages(parsePageSelection('1-3, 1-3'), 3, 5))).toMatchObject({
      type: 'too_many_pages',
      msg: expect.stringContaining('more than 5 pages, the most a result may have'),
    });
  });

  it('hands qpdf ascending runs as ranges, and everything else in the order given', () => {
    expect(pageRangeArgument([1, 2, 3, 7, 6, 8, 9, 9])).toBe('1-3,7,6,8-9,9');
  });
});

describe('rotation plans', () => {
  it('turns every page, or the named pages grouped by angle, leaving 0 out', () => {
    expect(rotationsFor(planRotation({ rotation: 270 }), 4)).toEqual([{ angle: 270, pages: 'all' }]);
    expect(rotationsFor(planRotation({ rotation: 0 }), 4)).toEqual([]);
    expect(rotationsFor(planRotation({ pageRotations: { '3': 90, '1': 90, '2': 180, '4': 0 } }), 4)).toEqual([
      { angle: 90, pages: [1, 3] },
      { angle: 180, pages: [2] },
    ]);
  });

  it.each([
    [{ rotation: 45 }, ['body', 'rotation'], 'rotation 45 is not allowed'],
    [{ rotation: -90 }, ['body', 'rotation'], 'rotation -90 is not allowed'],
    [{ rotation: 90, pageRotations: { '1': 90 } }, ['body'], 'not both'],
    [{}, ['body'], 'Give rotation'],
    [{ rotation: null, pageRotations: null }, ['body'], 'Give rotation'],
    [{ pageRotations: {} }, ['body', 'page_rotations'], 'is empty'],
    [{ pageRotations: { x: 90 } }, ['body', 'page_rotations', 'x'], '"x" is not a page number'],
    [{ pageRotations: { '0': 90 } }, ['body', 'page_rotations', '0'], '"0" is not a page number'],
    [{ pageRotations: { '2': 30 } }, ['body', 'page_rotations', '2'], 'rotation 30 for page 2'],
    [{ pageRotations: { '2': 90, '02': 90 } }, ['body', 'page_rotations', '02'], 'page 2 is named twice'],
  ])('refuses %j before any download', (input, loc, message) => {
    expect(refusal(() => planRotation(input))).toMatchObject({ loc, msg: expect.stringContaining(message) });
  });

  it('refuses a named page outside the document once its page count is known', () => {
    expect(refusal(() => rotationsFor(planRotation({ pageRotations: { '5': 90 } }), 4))).toMatchObject({
      loc: ['body', 'page_rotations', '5'],
      type: 'page_out_of_range',
    });
  });
});
