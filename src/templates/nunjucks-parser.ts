import nunjucks from 'nunjucks';

/** Nunjucks' parser (public at runtime, missing from its type definitions). Parsing never runs template code. */
export const parseTemplate = (source: string): unknown =>
  (nunjucks as unknown as { parser: { parse(src: string, extensions: unknown[], opts: object): unknown } }).parser.parse(source, [], {});
