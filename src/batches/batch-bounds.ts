/**
 * The bounds of a batch's rows and of the work that queues, cancels or discards its items, fixed here
 * with their reasons (docs/batches.md "Bounds"; issue 49). Every bound is checked while the rows
 * stream in, so a file past one is refused before it is held.
 */

const KiB = 1024;
const MiB = 1024 * KiB;

/** The largest rows file of a multipart batch: read as a stream, never held whole. */
export const BATCH_UPLOAD_MAX_BYTES = 100 * MiB;

/** A merged PDF holds at most this many items: one qpdf run merges them, within its time and memory ceiling. */
export const MERGED_MAX_ITEMS = 2000;

/** Columns of a CSV header: above any template's fields (the largest forms have a few hundred), far below 1,000-column floods. */
export const BATCH_MAX_COLUMNS = 500;

/** One CSV cell: a long text or a JSON array of line items fits; a 90 MB cell is refused as it is read. */
export const BATCH_MAX_CELL_BYTES = 256 * KiB;

/**
 * One row (a CSV record or an NDJSON line as read, and its data as stored): the parser never buffers
 * more than this for one row, so an unclosed quote or a file without newlines is refused at this size.
 */
export const BATCH_MAX_ROW_BYTES = 1 * MiB;

/**
 * Every row's data together, as stored on the job rows: a 50,000-row batch of 1 KB rows is a fifth of
 * it; it bounds what one batch adds to the database and to the spool on disk (keys repeat per row, so
 * a narrow upload can store several times its size).
 */
export const BATCH_MAX_DATA_BYTES = 256 * MiB;

/**
 * Items per database transaction when a batch is queued (credits reserved, job rows inserted), cancelled
 * or discarded: each transaction takes tens of milliseconds on SQLite, and the event loop and the
 * database's writer are free between two (a 50,000-item batch in one transaction held both for
 * seconds). Smaller chunks cost more in all (each commit rewrites index pages): 250 items took ~1.5×
 * the total time of 1,000 in docs/performance-log/2026-12-02-issue-49-batches.md.
 */
export const BATCH_CHUNK_ITEMS = 500;

/** Rows read between two turns of the event loop: parsing and checking them is a short task. */
export const ROWS_PER_TURN = 500;

/** Characters of CSV or NDJSON text handed to the parser at a time (a 10 MiB string is not one task). */
export const TEXT_PIECE_CHARS = 64 * KiB;
