/**
 * Something a document needed and did not get, or got differently than asked: a remote image that was
 * blocked or timed out, an asset that does not exist, a variable the data lacks (issue 13). Never
 * dropped silently: it travels with the result to the JSON answer (`warnings`), the job and its
 * webhook payload, and as a count in the `X-Pressroom-Warnings` header of binary answers.
 */
export interface DocumentWarning {
  /** Stable, machine-readable, e.g. `RESOURCE_BLOCKED`, `RESOURCE_FAILED`, `UNDEFINED_VARIABLE`. */
  code: string;
  /** One sentence for a person. */
  message: string;
  /** The resource concerned (redacted of credentials), when there is one. */
  url?: string;
}
