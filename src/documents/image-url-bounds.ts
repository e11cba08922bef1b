/** The fixed bounds on image modifications' `image_url` downloads (config `images`, docs/images.md). */

/** Bytes all `image_url` downloads of one image request may take together: a few full-size photos. */
export const IMAGE_URL_MAX_BYTES = 10 * 1024 * 1024;

/** Time all `image_url` downloads of one image request may take together: well within a synchronous request's deadline. */
export const IMAGE_URL_TIMEOUT_MS = 10_000;
