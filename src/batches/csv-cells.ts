/**
 * How a batch's CSV cell becomes a value of its field's type (docs/batches.md#csv-rows): `number` and
 * `integer` take numbers, `boolean` true/false (1/0, yes/no), `array` a JSON array; other fields keep
 * the text. The one rule, used by the service's row check (batch-rows.ts) and by the studio's preview
 * of row 1, so both read a cell alike. Pure: no imports.
 */

/** The CSV column that names each item's file instead of a field. */
export const FILENAME_COLUMN = '_filename';

export const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
export const INTEGER = /^-?\d+$/;

/** A value as a fault message names it: quoted text (cut at 40 characters), or its kind. */
export const describeValue = (value: unknown): string =>
  typeof value === 'string'
    ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
    : Array.isArray(value)
      ? 'an array'
      : value === null
        ? 'null'
        : typeof value;

/** Why a cell does not fit its field: the 422's `msg` and `type`. */
export interface CellFault {
  msg: string;
  type: string;
}

/** A non-empty cell as a field of `type` wants it (`undefined`: a field without a type, or no field), or why it cannot be. */
export function typeCell(type: string | undefined, cell: string): { value: unknown } | { fault: CellFault } {
  switch (type) {
    case 'integer':
    case 'number': {
      const whole = type === 'integer';
      if ((whole ? INTEGER : NUMBER).test(cell.trim())) return { value: Number(cell.trim()) };
      return {
        fault: {
          msg: `Expected ${whole ? 'a whole number' : 'a number'}, got ${describeValue(cell)}`,
          type: `${type}_type`,
        },
      };
    }
    case 'boolean': {
      const word = cell.trim().toLowerCase();
      if (['true', '1', 'yes'].includes(word)) return { value: true };
      if (['false', '0', 'no'].includes(word)) return { value: false };
      return { fault: { msg: `Expected true or false, got ${describeValue(cell)}`, type: 'bool_type' } };
    }
    case 'array':
      try {
        const parsed: unknown = JSON.parse(cell);
        if (Array.isArray(parsed)) return { value: parsed };
      } catch {
        // the fault below
      }
      return { fault: { msg: `Expected a JSON array in the cell, got ${describeValue(cell)}`, type: 'list_type' } };
    default:
      return { value: cell };
  }
}
