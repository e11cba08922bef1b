/**
 * The fixed bounds on the remote images, fonts and stylesheets documents load (config
 * `remoteResources`, docs/assets.md "Remote resources"), each with its reason. The operator turns
 * remote resources on or off and names internal hosts (PRESSROOM_REMOTE_RESOURCES).
 */

/** Largest resource: a generous photo or font file; anything bigger belongs in the asset library. */
export const REMOTE_RESOURCE_MAX_BYTES = 5 * 1024 * 1024;

/** One resource's deadline, redirects included: a server that slow holds a render slot for nothing. */
export const REMOTE_RESOURCE_TIMEOUT_MS = 5000;

/** Resources one document may load: a page of logos and fonts, not a crawl. */
export const REMOTE_RESOURCES_PER_DOCUMENT = 50;

/** Bytes of remote resources one document may load together: what one render slot may hold of them. */
export const REMOTE_RESOURCE_DOCUMENT_MAX_BYTES = 20 * 1024 * 1024;

/** Time one document may spend fetching, from its first fetch: a third of the synchronous render deadline. */
export const REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS = 10_000;

/** The in-process cache shared by all documents: the same logo is fetched once, not per document. */
export const REMOTE_RESOURCE_CACHE_BYTES = 64 * 1024 * 1024;
