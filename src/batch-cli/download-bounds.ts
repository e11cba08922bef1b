/**
 * What `pressroom generate` accepts from a download link (issue 49): links may point at another host,
 * which the command does not trust. Measured against: the service's largest document is 100 MiB by
 * default (PRESSROOM_MAX_DOCUMENT_BYTES), a zip or merged file of a large batch more, so the size is an
 * option (`--max-file-mb`); the times are not, since a server that sends nothing for this long, or
 * needs longer than this for one file, is broken or hostile.
 */

/** The kinds of file a link may answer. */
export type DownloadKind = 'pdf' | 'zip';

/** `--max-file-mb`'s default: ten times the service's default largest document. */
export const DEFAULT_MAX_FILE_MB = 1024;
/** A download that receives no byte for this long fails (a server sending 1 byte per 20 s). */
export const DOWNLOAD_IDLE_SECONDS = 15;
/** A download not finished within this fails: 1 GiB at under 2 MB/s. */
export const DOWNLOAD_TOTAL_SECONDS = 600;
