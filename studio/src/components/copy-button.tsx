/** A button that copies text, with a fallback for pages served over plain HTTP (no Clipboard API). */
import { useState } from 'preact/hooks';

async function copyText(text: string): Promise<boolean> {
  if (window.isSecureContext && navigator.clipboard) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // fall through to the selection copy
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  return ok;
}

export function CopyButton({
  text,
  label = 'Copy',
  class: className = '',
}: {
  text: string;
  label?: string;
  class?: string;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <button
      type="button"
      class={`button button-small ${className}`}
      onClick={async () => {
        setState((await copyText(text)) ? 'copied' : 'failed');
        setTimeout(() => setState('idle'), 2000);
      }}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy' : label}
      <span class="visually-hidden" aria-live="polite">
        {state === 'copied' ? ' — copied to the clipboard' : ''}
      </span>
    </button>
  );
}
