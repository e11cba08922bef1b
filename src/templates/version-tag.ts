/**
 * What a template version's tag is (TemplateFox's rule): 2–50 characters, lowercase letters, digits,
 * `_` and `-`, starting and ending with a letter or digit. The one definition: the version routes
 * validate tags with `VERSION_TAG_PATTERN`, and the studio checks and explains them from it.
 * No imports: the studio bundles this file as it is.
 */

/** The rule as JSON Schema `pattern` / RegExp source. */
export const VERSION_TAG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,48}[a-z0-9]$';

/** The rule in words, for help text and messages. */
export const VERSION_TAG_RULE_TEXT =
  '2–50 characters: lowercase letters, digits, "_" and "-", starting and ending with a letter or digit';

const VERSION_TAG = new RegExp(VERSION_TAG_PATTERN);

/** Whether `value` is a valid tag. */
export function isVersionTag(value: string): boolean {
  return VERSION_TAG.test(value);
}
