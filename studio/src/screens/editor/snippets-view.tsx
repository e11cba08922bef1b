/** Copy-paste snippets for the current template, data and output mode. */
import { useMemo, useState } from 'preact/hooks';
import { CopyButton } from '../../components/copy-button.js';
import { TabPanel, Tabs } from '../../components/tabs.js';
import { buildSnippets, type RunMode, type Snippets } from '../../lib/snippets.js';
import type { DataObject } from '../../lib/form-data.js';
import type { EInvoiceRequest } from '../../lib/einvoice/einvoice.js';

const LANGS: { id: keyof Snippets; label: string }[] = [
  { id: 'curl', label: 'curl' },
  { id: 'javascript', label: 'JavaScript' },
  { id: 'python', label: 'Python' },
];

export function SnippetsView({
  templateId,
  data,
  mode,
  filename,
  version,
  einvoice,
  finishing,
}: {
  templateId: string;
  data: DataObject;
  mode: RunMode;
  filename?: string;
  version?: string;
  einvoice?: EInvoiceRequest;
  finishing?: Record<string, unknown>;
}) {
  const [lang, setLang] = useState<keyof Snippets>('curl');
  const finishingKey = JSON.stringify(finishing ?? {});
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const snippets = useMemo(
    () => buildSnippets({ baseUrl: location.origin, templateId, data, mode, filename, version, einvoice, finishing }),
    [templateId, data, mode, filename, version, einvoice, finishingKey],
  );
  return (
    <div class="snippets">
      <h3>Call it from code</h3>
      <p class="help">
        Set <code>PRESSROOM_API_KEY</code> in your environment; the snippets never contain your key.
      </p>
      <Tabs<keyof Snippets>
        idPrefix="snippet"
        label="Snippet language"
        tabs={LANGS}
        selected={lang}
        onSelect={setLang}
      />
      {LANGS.map((l) => (
        <TabPanel key={l.id} idPrefix="snippet" id={l.id} selected={lang === l.id}>
          <div class="snippet">
            <CopyButton text={snippets[l.id]} label={`Copy ${l.label}`} class="snippet-copy" />
            <pre tabIndex={0} role="region" aria-label={`${l.label} snippet`}>
              <code>{snippets[l.id]}</code>
            </pre>
          </div>
        </TabPanel>
      ))}
    </div>
  );
}
