/** Previous / next paging for offset-based lists. */
export function Pager({
  total,
  limit,
  offset,
  onOffset,
  label,
}: {
  total: number;
  limit: number;
  offset: number;
  onOffset(offset: number): void;
  label: string;
}) {
  if (total <= limit && offset === 0)
    return total > 0 ? <p class="muted">{total === 1 ? '1 item' : `${total} items`}</p> : null;
  const first = total === 0 ? 0 : offset + 1;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={label}>
      <button
        type="button"
        class="button button-small"
        disabled={offset === 0}
        onClick={() => onOffset(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <span role="status">
        {first}–{last} of {total}
      </span>
      <button
        type="button"
        class="button button-small"
        disabled={offset + limit >= total}
        onClick={() => onOffset(offset + limit)}
      >
        Next
      </button>
    </nav>
  );
}
