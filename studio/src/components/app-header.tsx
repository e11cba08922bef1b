/**
 * The header every signed-in screen shows: who is signed in, plan, credit balance and the rate-limit
 * state of the last response (with a live countdown to the window's reset), plus the main navigation.
 */
import { useEffect, useState } from 'preact/hooks';
import { signOut, useSession } from '../api/session.js';
import type { RateLimitState } from '../lib/api-types.js';
import { formatDuration } from '../lib/format.js';
import { canLeave, Link, paths, usePathname } from '../router.js';

const NAV = [
  { href: paths.templates, label: 'Templates', match: /^\/($|templates)/ },
  { href: paths.assets, label: 'Assets', match: /^\/assets/ },
  { href: paths.jobs, label: 'Jobs', match: /^\/jobs/ },
  { href: paths.batches, label: 'Batches', match: /^\/batches/ },
  { href: paths.pdfTools, label: 'PDF tools', match: /^\/tools\/pdf/ },
  { href: paths.einvoiceValidate, label: 'Validate e-invoice', match: /^\/tools\/einvoice/ },
  { href: paths.transactions, label: 'Transactions', match: /^\/transactions/ },
  { href: paths.certificates, label: 'Certificates', match: /^\/settings\/certificates/ },
  { href: paths.s3, label: 'S3 storage', match: /^\/settings\/s3/ },
  { href: paths.apiKeys, label: 'API keys', match: /^\/settings\/api-keys/ },
];

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

function RateLimitMeter({ rateLimit }: { rateLimit: RateLimitState | null }) {
  const now = useNow(1000);
  if (!rateLimit)
    return (
      <span class="meter" title="No rate limit reported for this account">
        Requests: no limit reported
      </span>
    );
  const secondsLeft = rateLimit.resetAt - now / 1000;
  // Once the window has run out the last answer's count is old: a new window starts full.
  const reset = secondsLeft <= 0;
  const remaining = reset ? rateLimit.limit : rateLimit.remaining;
  const low = remaining <= Math.max(1, Math.floor(rateLimit.limit * 0.1));
  return (
    <span
      class={`meter ${low ? 'meter-low' : ''}`}
      data-testid="rate-limit"
      title={reset ? 'A new window starts with your next request; its answer gives the exact count.' : undefined}
    >
      <span class="meter-label">Requests left</span>{' '}
      <strong>
        {remaining}/{rateLimit.limit}
      </strong>
      {!reset && <span class="meter-detail"> · resets in {formatDuration(secondsLeft)}</span>}
    </span>
  );
}

export function AppHeader() {
  const { account, rateLimit } = useSession();
  const pathname = usePathname();
  return (
    <header class="app-header">
      <div class="app-header-row">
        <Link href={paths.templates} class="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          <span>Pressroom Studio</span>
        </Link>
        <div class="account" aria-label="Account" role="group">
          <span class="account-name" data-testid="account-name" title={account?.account_id}>
            {account ? (account.email ?? account.account_id) : '…'}
          </span>
          {account && (
            <span class={`plan plan-${account.plan}`} data-testid="account-plan">
              {account.plan}
            </span>
          )}
          <span class="meter" data-testid="credits">
            <span class="meter-label">Credits</span> <strong>{account ? account.credits : '…'}</strong>
          </span>
          <RateLimitMeter rateLimit={rateLimit} />
          <button type="button" class="button button-small" onClick={async () => (await canLeave()) && signOut()}>
            Sign out
          </button>
        </div>
      </div>
      <nav aria-label="Main">
        <ul class="nav">
          {NAV.map((item) => (
            <li key={item.href}>
              <Link href={item.href} class="nav-link" aria-current={item.match.test(pathname) ? 'page' : undefined}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
    </header>
  );
}
