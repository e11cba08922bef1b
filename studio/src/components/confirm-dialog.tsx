/**
 * A confirmation dialog on the native <dialog> (focus moves in and is trapped; Escape cancels), opened
 * from anywhere with `await confirmAction({...})`, or `await chooseAction({...})` when there are more
 * ways forward than yes and no. <ConfirmHost/> is mounted once by the app.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export interface ConfirmRequest {
  title: string;
  message: string;
  confirmLabel: string;
  danger?: boolean;
  /** The cancel button's text ("Cancel" by default). */
  cancelLabel?: string;
}

/** One way forward besides cancelling. */
export interface Choice<T extends string> {
  id: T;
  label: string;
  tone?: 'primary' | 'danger' | 'plain';
}

export interface ChoiceRequest<T extends string> {
  title: string;
  message: string;
  /** Shown after the cancel button, the last one the default (Enter). */
  choices: readonly Choice<T>[];
  cancelLabel?: string;
}

type Pending = ChoiceRequest<string> & { resolve: (choice: string | null) => void };
let show: ((request: Pending) => void) | null = null;

/** Asks the user to pick one of `choices`; resolves with its id, or null when they cancel. */
export function chooseAction<T extends string>(request: ChoiceRequest<T>): Promise<T | null> {
  return new Promise((resolve) => {
    if (!show) {
      const last = request.choices[request.choices.length - 1];
      return resolve(last && window.confirm(`${request.title}\n\n${request.message}`) ? last.id : null);
    }
    show({ ...request, resolve: resolve as (choice: string | null) => void });
  });
}

/** Asks the user; resolves true when they confirm. */
export async function confirmAction(request: ConfirmRequest): Promise<boolean> {
  const choice = await chooseAction({
    title: request.title,
    message: request.message,
    cancelLabel: request.cancelLabel,
    choices: [{ id: 'confirm', label: request.confirmLabel, tone: request.danger ? 'danger' : 'primary' }],
  });
  return choice === 'confirm';
}

const TONE_CLASS = { primary: 'button-primary', danger: 'button-danger', plain: '' } as const;

/** The dialog element that chooseAction() and confirmAction() use. */
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

  const close = (choice: string | null) => {
    pending?.resolve(choice);
    setPending(null);
    if (dialog.current?.open) dialog.current.close();
    (returnFocus.current as HTMLElement | null)?.focus?.();
  };

  const last = pending?.choices[pending.choices.length - 1];
  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-message"
      onCancel={(e) => (e.preventDefault(), close(null))}
    >
      {pending && (
        <form method="dialog" onSubmit={(e) => (e.preventDefault(), close(last?.id ?? null))}>
          <h2 id="confirm-title">{pending.title}</h2>
          <p id="confirm-message">{pending.message}</p>
          <div class="dialog-actions">
            <button type="button" class="button" onClick={() => close(null)} autoFocus>
              {pending.cancelLabel ?? 'Cancel'}
            </button>
            {pending.choices.map((choice) => (
              <button
                key={choice.id}
                type={choice === last ? 'submit' : 'button'}
                class={`button ${TONE_CLASS[choice.tone ?? 'primary']}`}
                onClick={choice === last ? undefined : () => close(choice.id)}
              >
                {choice.label}
              </button>
            ))}
          </div>
        </form>
      )}
    </dialog>
  );
}
