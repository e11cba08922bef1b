/**
 * Template names by id, for screens that list what the API reports by id (jobs, transactions):
 * one GET /v1/templates per screen visit. A template deleted since shows its id only.
 */
import { api } from '../api/session.js';
import type { TemplateSummary } from '../lib/api-types.js';
import { useLoad } from './use-load.js';

export function useTemplateNames(): Map<string, string> {
  const list = useLoad(
    async () => (await api().json<{ templates: TemplateSummary[] }>('GET', '/v1/templates')).templates,
    [],
  );
  return new Map((list.data ?? []).map((t) => [t.id, t.name]));
}
