/**
 * Batches (issue 40, docs/batches.md): many documents from one template and a CSV file. The form starts
 * one; `/batches/{id}` watches one live; the account's recent batches are listed below.
 */
import { useState } from 'preact/hooks';
import type { Batch } from '../../lib/api-types.js';
import { useTemplateNames } from '../../components/use-template-names.js';
import { navigate, paths } from '../../router.js';
import { BatchForm } from './batch-form.js';
import { BatchWatch } from './batch-watch.js';
import { RecentBatches } from './recent-batches.js';

export function BatchesScreen({ batchId }: { batchId: string | null }) {
  const templateNames = useTemplateNames();
  const [watched, setWatched] = useState<Batch | null>(null);
  const current = watched && watched.batch_id === batchId ? watched : null;
  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>Batches</h1>
      </div>
      <p class="help">
        A document per row of a CSV file, from one template: one credit each, reserved at the start; rows that fail and
        rows a cancel stops are refunded. The CSV is checked against the template's fields before anything is charged.
      </p>
      <div class="batches-layout">
        {batchId && <BatchWatch key={batchId} batchId={batchId} templateNames={templateNames} onUpdate={setWatched} />}
        <BatchForm onStarted={(id) => void navigate(paths.batch(id))} />
      </div>
      <RecentBatches watched={current} templateNames={templateNames} />
    </main>
  );
}
