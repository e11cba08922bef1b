/**
 * A confirmation dialog on the native <dialog> (focus moves in and is trapped; Escape cancels), opened
 * from anywhere with `await confirmAction({...})`. <ConfirmHost/> is mounted once by the app.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export interface ConfirmRequest {
  title: string;
  message: string;
  confirmLabel: string;
  danger?: boolean;
}

type Pending = ConfirmRequest & { resolve: (ok: boolean) => void };
let show: ((request: Pending) => void) | null = null;

/** Asks the user; resolves true when they confirm. */
export function confirmAction(request: ConfirmRequest): Promise<boolean> {
  return new Promise((resolve) => {
    if (!show) return resolve(window.confirm(`${request.title}\n\n${request.message}`));
    show({ ...request, resolve });
  });
}

/** The dialog element that confirmAction() uses. */
export function ConfirmHost() {
  const [pending, setPending] = useState<Pending | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const returnFocus = useRef<Element | null>(null);

  useEffect(() => {
    show = (request) => {
      returnFocus.current = document.activeElement;
      setPending(request);
    };
    return () => {
      show = null;
    };
  }, []);

  useEffect(() => {
    if (pending && dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [pending]);

  const close = (ok: boolean) => {
    pending?.resolve(ok);
    setPending(null);
    if (dialog.current?.open) dialog.current.close();
    (returnFocus.current as HTMLElement | null)?.focus?.();
  };

  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="confirm-title" aria-describedby="confirm-message" onCancel={(e) => (e.preventDefault(), close(false))}>
      {pending && (
        <form method="dialog" onSubmit={(e) => (e.preventDefault(), close(true))}>
          <h2 id="confirm-title">{pending.title}</h2>
          <p id="confirm-message">{pending.message}</p>
          <div class="dialog-actions">
            <button type="button" class="button" onClick={() => close(false)} autoFocus>
              Cancel
            </button>
            <button type="submit" class={`button ${pending.danger ? 'button-danger' : 'button-primary'}`}>
              {pending.confirmLabel}
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}
