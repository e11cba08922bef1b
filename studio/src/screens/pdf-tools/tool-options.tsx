/**
 * The fields of the finishing tools on the PDF tools screen (issue 39): sign, split, watermark,
 * metadata, protect and unlock, kept as one record of typed text and checkboxes, and the request body
 * they make (or what is missing). Merge, extract and rotate keep their own fields in the screen.
 */
import { Link, paths } from '../../router.js';
import { NO_SERVICE_TSA, type CertificateInfo } from '../finishing/finishing.js';

export type Options = Record<string, string | boolean>;

export const INITIAL_OPTIONS: Options = {
  certificate: '',
  reason: '',
  location: '',
  timestamp: false,
  tsaUrl: '',
  splitMode: 'ranges',
  ranges: '',
  every: '1',
  text: '',
  opacity: '0.3',
  pages: '',
  title: '',
  author: '',
  subject: '',
  keywords: '',
  ownerPassword: '',
  userPassword: '',
  printing: 'high',
  copying: false,
  password: '',
};

const str = (o: Options, key: string) => String(o[key] ?? '').trim();

/**
 * The tool's own fields of the request, or what the user still has to give. `serviceTsa` false: this
 * Pressroom has no time-stamp authority of its own (GET /v1/capabilities), so a time-stamp needs one named.
 */
export function toolFields(tool: string, o: Options, serviceTsa = true): Record<string, unknown> | string {
  switch (tool) {
    case 'sign':
      if (!str(o, 'certificate')) return 'Choose a certificate.';
      if (o.timestamp && !serviceTsa && !str(o, 'tsaUrl'))
        return `Time-stamp: ${NO_SERVICE_TSA} Give its address, or leave the time-stamp out.`;
      if (o.timestamp && str(o, 'tsaUrl') && !/^https?:\/\//i.test(str(o, 'tsaUrl')))
        return 'Time-stamp authority: an https:// address.';
      return {
        certificate: str(o, 'certificate'),
        ...(str(o, 'reason') ? { reason: str(o, 'reason') } : {}),
        ...(str(o, 'location') ? { location: str(o, 'location') } : {}),
        ...(o.timestamp ? { timestamp: true } : {}),
        ...(o.timestamp && str(o, 'tsaUrl') ? { tsa_url: str(o, 'tsaUrl') } : {}),
      };
    case 'split': {
      if (o.splitMode === 'every') {
        const every = Number(str(o, 'every'));
        return Number.isInteger(every) && every >= 1 ? { every } : 'Pages per part: a whole number from 1.';
      }
      const ranges = str(o, 'ranges')
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean);
      return ranges.length ? { ranges } : 'Name the parts, e.g. 1-3, 4-.';
    }
    case 'watermark': {
      const opacity = Number(str(o, 'opacity'));
      if (!str(o, 'text')) return 'Type the watermark text.';
      if (!str(o, 'opacity') || !(opacity >= 0.05 && opacity <= 1)) return 'Opacity: a number from 0.05 to 1.';
      return { watermark: { text: String(o.text), opacity, ...(str(o, 'pages') ? { pages: str(o, 'pages') } : {}) } };
    }
    case 'metadata': {
      const metadata: Record<string, unknown> = {};
      for (const key of ['title', 'author', 'subject']) if (str(o, key)) metadata[key] = str(o, key);
      const keywords = str(o, 'keywords')
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean);
      if (keywords.length) metadata.keywords = keywords;
      return Object.keys(metadata).length ? { metadata } : 'Fill in at least one entry.';
    }
    case 'protect':
      if (!o.ownerPassword) return 'The owner password is required.';
      if (o.ownerPassword === o.userPassword) return 'The owner and user passwords must differ.';
      return {
        protect: {
          owner_password: o.ownerPassword,
          ...(o.userPassword ? { user_password: o.userPassword } : {}),
          permissions: { printing: o.printing, copying: !!o.copying },
        },
      };
    case 'unlock':
      return o.password ? { password: o.password } : 'Type the password of the PDF.';
    default:
      return {};
  }
}

/** The screen's names for the places a refusal of these tools is about. */
export const OPTION_PLACES: Record<string, string> = {
  certificate: 'Certificate',
  reason: 'Reason',
  location: 'Location',
  timestamp: 'Time-stamp',
  tsa_url: 'Time-stamp authority',
  visible: 'Visible signature',
  ranges: 'Parts',
  every: 'Pages per part',
  watermark: 'Watermark',
  metadata: 'Document information',
  protect: 'Protection',
  password: 'Password',
};

interface Props {
  tool: string;
  options: Options;
  set(key: string, value: string | boolean): void;
  certificates: CertificateInfo[] | undefined;
  /** The service has a time-stamp authority of its own (true while unknown). */
  serviceTsa: boolean;
}

function Text({
  label,
  name,
  options,
  set,
  type = 'text',
  placeholder,
}: {
  label: string;
  name: string;
  options: Options;
  set: Props['set'];
  type?: string;
  placeholder?: string;
}) {
  return (
    <label class="field">
      <span class="field-label">{label}</span>
      <input
        type={type}
        value={String(options[name] ?? '')}
        onInput={(e) => set(name, e.currentTarget.value)}
        placeholder={placeholder}
        spellcheck={false}
        autoComplete="off"
      />
    </label>
  );
}

function Check({ label, name, options, set }: { label: string; name: string; options: Options; set: Props['set'] }) {
  return (
    <label class="field checkbox">
      <input type="checkbox" checked={!!options[name]} onChange={(e) => set(name, e.currentTarget.checked)} />
      <span class="field-label">{label}</span>
    </label>
  );
}

/** A select of the account's certificates, shared by the Sign tool and Run. */
export function CertificateSelect({
  value,
  onChange,
  certificates,
  id,
}: {
  value: string;
  onChange(name: string): void;
  certificates: CertificateInfo[] | undefined;
  id: string;
}) {
  if (certificates && certificates.length === 0)
    return (
      <p class="notice notice-warning">
        No certificates yet: <Link href={paths.certificates}>upload one on the Certificates screen</Link>.
      </p>
    );
  return (
    <label class="field" for={id}>
      <span class="field-label">Certificate</span>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">{certificates ? 'Choose a certificate…' : 'Loading…'}</option>
        {certificates?.map((c) => (
          <option key={c.name} value={c.name}>
            {c.name} ({c.subject})
          </option>
        ))}
      </select>
    </label>
  );
}

export function ToolOptions({ tool, options, set, certificates, serviceTsa }: Props) {
  const p = { options, set };
  switch (tool) {
    case 'sign':
      return (
        <>
          <CertificateSelect
            id="sign-certificate"
            value={String(options.certificate)}
            onChange={(v) => set('certificate', v)}
            certificates={certificates}
          />
          <Text label="Reason (optional)" name="reason" placeholder="Approved" {...p} />
          <Text label="Location (optional)" name="location" placeholder="Berlin" {...p} />
          <Check label="Time-stamp the signature (PAdES B-T)" name="timestamp" {...p} />
          {options.timestamp && (
            <Text
              label={
                serviceTsa ? "Time-stamp authority URL (optional; empty: the service's)" : 'Time-stamp authority URL'
              }
              name="tsaUrl"
              type="url"
              placeholder="https://"
              {...p}
            />
          )}
          {options.timestamp && !serviceTsa && (
            <p class="help" data-testid="tsa-needed">
              Needed: {NO_SERVICE_TSA}
            </p>
          )}
        </>
      );
    case 'split':
      return (
        <>
          <fieldset class="radio-group">
            <legend class="field-label">Cut</legend>
            <label class="radio">
              <input
                type="radio"
                name="split-mode"
                checked={options.splitMode === 'ranges'}
                onChange={() => set('splitMode', 'ranges')}
              />
              By ranges
            </label>
            <label class="radio">
              <input
                type="radio"
                name="split-mode"
                checked={options.splitMode === 'every'}
                onChange={() => set('splitMode', 'every')}
              />
              Every n pages
            </label>
          </fieldset>
          {options.splitMode === 'every' ? (
            <Text label="Pages per part" name="every" type="number" {...p} />
          ) : (
            <Text label="Parts (ranges)" name="ranges" placeholder="1-3, 4-" {...p} />
          )}
        </>
      );
    case 'watermark':
      return (
        <>
          <Text label="Watermark text" name="text" placeholder="CONFIDENTIAL" {...p} />
          <Text label="Opacity (0.05–1)" name="opacity" {...p} />
          <Text label="Pages (optional; every page by default)" name="pages" placeholder="1-3, 5" {...p} />
        </>
      );
    case 'metadata':
      return (
        <>
          <Text label="Title" name="title" {...p} />
          <Text label="Author" name="author" {...p} />
          <Text label="Subject" name="subject" {...p} />
          <Text label="Keywords (comma-separated)" name="keywords" {...p} />
        </>
      );
    case 'protect':
      return (
        <>
          <Text label="Owner password (lifts the permissions)" name="ownerPassword" type="password" {...p} />
          <Text label="User password (optional; needed to open)" name="userPassword" type="password" {...p} />
          <label class="field">
            <span class="field-label">Printing</span>
            <select value={String(options.printing)} onChange={(e) => set('printing', e.currentTarget.value)}>
              <option value="high">Allowed</option>
              <option value="low">Low resolution only</option>
              <option value="none">Not allowed</option>
            </select>
          </label>
          <Check label="Allow copying text and images" name="copying" {...p} />
        </>
      );
    case 'unlock':
      return <Text label="Password of the PDF" name="password" type="password" {...p} />;
    default:
      return null;
  }
}
