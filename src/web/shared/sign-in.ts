// The sign-in form of both pages, without a framework: Email, Password, "Sign in".
import { isUnreachable } from './connectivity.js';
import { loadSession, signIn, signOut, type Session } from './session.js';
import { h } from './dom.js';

/** Renders the form into `container`; `notice` says why it is shown (for example an ended session). */
export function renderSignIn(container: HTMLElement, { title, notice, onSignedIn }: { title: string; notice?: string; onSignedIn: (session: Session) => void }): void {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const error = h('p', { className: 'error', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit', className: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { className: 'panel', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, title),
    notice ? h('p', { className: 'notice', role: 'status' }, notice) : null,
    h('label', { className: 'field' }, h('span', {}, 'Email'), email),
    h('label', { className: 'field' }, h('span', {}, 'Password'), password),
    error,
    button,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.hidden = true;
    try {
      onSignedIn(await signIn(email.value.trim(), password.value));
    } catch (failure) {
      // The form does not send the password again by itself: it says what to do.
      error.textContent = isUnreachable(failure) ? 'The server cannot be reached. Check the connection, then sign in again.' : (failure as Error).message;
      error.hidden = false;
      button.disabled = false;
    }
  });
  container.replaceChildren(h('main', { className: 'sign-in' }, form));
  email.focus();
}

/**
 * A "Sign out" button for a page without a framework: ends the session on the server (best effort),
 * forgets it here and calls `onSignedOut`.
 */
export function signOutButton(onSignedOut: () => void): HTMLButtonElement {
  const button = h('button', { type: 'button' }, 'Sign out');
  button.addEventListener('click', () => {
    void signOut(loadSession());
    onSignedOut();
  });
  return button;
}
