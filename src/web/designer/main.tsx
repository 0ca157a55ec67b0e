// The designer (GET /): a single-page app for people, on the builder GraphQL with the session token.
// This entry holds only the sign-in page; the signed-in designer (shell.tsx) loads after sign-in,
// or at once beside this file when a session is kept (index.html preloads nothing it does not need).
import { StrictMode, Suspense, useState } from 'react';
import { createRoot } from 'react-dom/client';
import '../shared/base.css';
import './designer.css';
import { loadSession, type Session } from '../shared/session.js';
import { LoadBoundary, retryableLazy } from './recovery.js';
import { SignInPage } from './sign-in-page.js';

const Shell = retryableLazy(() => import('./shell.js'));

function Designer() {
  const [session, setSession] = useState<Session | null>(loadSession);
  if (!session) return <SignInPage onSignedIn={setSession} />;
  return (
    <LoadBoundary what="The designer">
      <Suspense fallback={<Starting />}>
        <Shell session={session} onSession={setSession} />
      </Suspense>
    </LoadBoundary>
  );
}

/** Where the designer will be, while its code arrives: the header's band and a line that says so. */
function Starting() {
  return (
    <div className="designer starting">
      {/* Bands only: no landmark until the real header and navigation arrive. */}
      <div className="designer-header" aria-hidden="true" />
      <div className="designer-nav" aria-hidden="true" />
      <main className="designer-main" aria-busy="true">
        <p className="muted">Loading the designer…</p>
      </main>
    </div>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Designer />
  </StrictMode>,
);
