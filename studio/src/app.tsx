/** The studio shell: sign-in when there is no key, otherwise the header and the current screen. */
import { useEffect, useRef } from 'preact/hooks';
import { refreshAccount, useSession } from './api/session.js';
import { AppHeader } from './components/app-header.js';
import { ConfirmHost } from './components/confirm-dialog.js';
import { Link, matchRoute, paths, usePathname, type Route } from './router.js';
import { ApiKeysScreen } from './screens/api-keys-screen.js';
import { AssetsScreen } from './screens/assets-screen.js';
import { BatchesScreen } from './screens/batches/batches-screen.js';
import { CertificatesScreen } from './screens/finishing/certificates-screen.js';
import { EditorScreen } from './screens/editor/editor-screen.js';
import { EInvoiceValidateScreen } from './screens/einvoice-validate/einvoice-validate-screen.js';
import { JobsScreen } from './screens/jobs-screen.js';
import { PdfToolsScreen } from './screens/pdf-tools/pdf-tools-screen.js';
import { S3Screen } from './screens/s3-screen.js';
import { SignInScreen } from './screens/sign-in.js';
import { TemplatesScreen } from './screens/templates-screen.js';
import { TransactionsScreen } from './screens/transactions-screen.js';

const TITLES: Record<Route['name'], string> = {
  templates: 'Templates',
  editor: 'Editor',
  jobs: 'Background jobs',
  batches: 'Batches',
  assets: 'Assets',
  transactions: 'Transactions',
  'pdf-tools': 'PDF tools',
  'einvoice-validate': 'Validate e-invoice',
  certificates: 'Certificates',
  s3: 'S3 storage',
  'api-keys': 'API keys',
  'not-found': 'Not found',
};

function Screen({ route }: { route: Route }) {
  switch (route.name) {
    case 'templates':
      return <TemplatesScreen />;
    case 'editor':
      return <EditorScreen key={route.templateId} templateId={route.templateId} />;
    case 'jobs':
      return <JobsScreen />;
    case 'batches':
      return <BatchesScreen batchId={route.batchId} />;
    case 'assets':
      return <AssetsScreen />;
    case 'transactions':
      return <TransactionsScreen />;
    case 'pdf-tools':
      return <PdfToolsScreen />;
    case 'einvoice-validate':
      return <EInvoiceValidateScreen />;
    case 'certificates':
      return <CertificatesScreen />;
    case 's3':
      return <S3Screen />;
    case 'api-keys':
      return <ApiKeysScreen />;
    case 'not-found':
      return (
        <main class="screen" id="main">
          <h1 tabIndex={-1}>Page not found</h1>
          <p>
            Nothing lives at <code>{route.path}</code>. <Link href={paths.templates}>Go to your templates</Link>.
          </p>
        </main>
      );
  }
}

export function App() {
  const { apiKey, account } = useSession();
  const pathname = usePathname();
  const route = matchRoute(pathname);

  useEffect(() => {
    if (apiKey && !account) void refreshAccount().catch(() => undefined);
  }, [apiKey, account]);

  useEffect(() => {
    document.title = apiKey ? `${TITLES[route.name]} · Pressroom Studio` : 'Sign in · Pressroom Studio';
  }, [apiKey, route.name]);

  // On navigation (not on the first load), move focus to the new screen's heading so screen readers announce it.
  const firstRender = useRef(true);
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    document.querySelector<HTMLElement>('main h1')?.focus({ preventScroll: true });
  }, [pathname]);

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      {apiKey ? (
        <>
          <AppHeader />
          <Screen route={route} />
        </>
      ) : (
        <SignInScreen />
      )}
      <ConfirmHost />
    </>
  );
}
