/** Inline messages: errors are announced at once (role=alert), statuses politely. */
import type { ComponentChildren } from 'preact';

export function ErrorNotice({ children, id }: { children: ComponentChildren; id?: string }) {
  if (!children) return null;
  return (
    <p class="notice notice-error" role="alert" id={id}>
      {children}
    </p>
  );
}

export function StatusNotice({
  children,
  tone = 'info',
}: {
  children: ComponentChildren;
  tone?: 'info' | 'success' | 'warning';
}) {
  return (
    <p class={`notice notice-${tone}`} role="status">
      {children}
    </p>
  );
}
