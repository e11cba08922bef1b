/** A template as a link by its name, the id on hover and as secondary text (or the id alone when the template is gone). */
import { Link, paths } from '../router.js';

export function TemplateRef({ id, names }: { id: string; names: Map<string, string> }) {
  const name = names.get(id);
  if (name === undefined) {
    return (
      <span title="Template id (no template of this account has it now)">
        <code>{id}</code>
      </span>
    );
  }
  return (
    <span class="template-ref">
      <Link href={paths.editor(id)} title={`Template id ${id}`}>
        {name}
      </Link>{' '}
      <code class="muted template-ref-id">{id}</code>
    </span>
  );
}
