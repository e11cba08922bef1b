import { useLayoutEffect, useRef } from 'preact/hooks';

/**
 * Calls `reset` when `key` (the options a result was made with) changes: a result or refusal answers
 * its own options, so once they change it is gone — in the same frame (a layout effect), never shown
 * beside the new options.
 */
export function useResetOnChange(key: string, reset: () => void): void {
  const shownFor = useRef(key);
  useLayoutEffect(() => {
    if (shownFor.current === key) return;
    shownFor.current = key;
    reset();
  }, [key]);
}
