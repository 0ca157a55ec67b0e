// The designer's sign-in form: the page itself when no one is signed in, and the content of the
// dialog that asks to sign in again when a session ends (then `inDialog`: no second <main>).
import { useState, type FormEvent } from 'react';
import { signIn, type Session } from '../shared/session.js';

export function SignInPage({ notice, onSignedIn, inDialog = false }: { notice?: string; onSignedIn: (session: Session) => void; inDialog?: boolean }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(email.trim(), password));
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
      setBusy(false);
    }
  }
  const form = (
    <form onSubmit={submit} className="panel" aria-labelledby="sign-in-title" aria-busy={busy}>
      <h1 id="sign-in-title">Sign in to Trellis</h1>
      {notice ? (
        <p className="notice" role="status">
          {notice}
        </p>
      ) : null}
      <label className="field">
        <span>Email</span>
        {/* The first thing to type: focused when the form appears. */}
        <input type="email" name="email" autoComplete="username" required autoFocus value={email} onChange={(event) => setEmail(event.target.value)} />
      </label>
      <label className="field">
        <span>Password</span>
        <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
      </label>
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
      {/* Not disabled while busy: a disabled button drops the focus to the page. */}
      <button type="submit" className="primary" aria-disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
  return inDialog ? <div className="sign-in">{form}</div> : <main className="sign-in">{form}</main>;
}
