/**
 * Which strings are accepted as a colour in an image modification (`color`, `background`). The value
 * is written into an element's inline style, so the grammar is strict on purpose: a hex colour, a
 * CSS colour keyword, or one colour function with plain numeric arguments. Nothing that could end the
 * declaration or open another (`;`, `:`, `!`, quotes, braces, backslashes, a second function) gets
 * through, so a modification can set a colour and nothing else.
 */

/** The CSS Color 4 named colours, plus `transparent` and `currentcolor`. */
const NAMED_COLORS = new Set(
  (
    'aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown burlywood ' +
    'cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray ' +
    'darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen ' +
    'darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue ' +
    'firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew ' +
    'hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan ' +
    'lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue lightslategray ' +
    'lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine mediumblue ' +
    'mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise mediumvioletred ' +
    'midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid ' +
    'palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum powderblue purple ' +
    'rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue ' +
    'slateblue slategray slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet wheat white ' +
    'whitesmoke yellow yellowgreen transparent currentcolor'
  ).split(' '),
);

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/;
/** One colour function; its arguments are numbers, units, `none`, commas, slashes and spaces only. */
const FUNCTION =
  /^(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch)\(\s*(?:[0-9.+\-e%]+(?:deg|grad|rad|turn)?|none)(?:(?:\s*[,/]\s*|\s+)(?:[0-9.+\-e%]+(?:deg|grad|rad|turn)?|none)){2,3}\s*\)$/;

/** True when `value` is a colour this service writes into a style (see the file comment). */
export function isCssColor(value: string): boolean {
  const color = value.trim().toLowerCase();
  if (color.length === 0 || color.length > 100) return false;
  return HEX.test(color) || NAMED_COLORS.has(color) || FUNCTION.test(color);
}

/** The colour as it goes into the style: trimmed and lower case. */
export function normalizeCssColor(value: string): string {
  return value.trim().toLowerCase();
}
