// The designer's address (#/section/id/tab) and the guard of unsaved changes: moving to another
// address or leaving the page asks first while an editor holds changes not saved.
import { useEffect, useRef } from 'react';

/** The route in the URL's hash: #/features/orders -> ['features', 'orders']. */
export function routeFromHash(): string[] {
  return location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
}

export function navigate(...parts: string[]) {
  location.hash = `#/${parts.map(encodeURIComponent).join('/')}`;
}

/** What holds unsaved changes now, by a key per editor: the text to show in the question. */
const unsaved = new Map<symbol, string>();

/** The question to ask before losing unsaved changes, or null when there are none. */
export function unsavedQuestion(): string | null {
  if (unsaved.size === 0) return null;
  const what = [...unsaved.values()].join(', ');
  return `You have unsaved changes in ${what}. Leave and lose them?`;
}

/** Forgets every unsaved change (what held them was deleted): the next move asks nothing. */
export function forgetUnsaved(): void {
  unsaved.clear();
}

/** Asks before losing unsaved changes; true when there are none or the person agrees to lose them. */
export function confirmLeaving(): boolean {
  const question = unsavedQuestion();
  if (question === null || window.confirm(question)) {
    unsaved.clear();
    return true;
  }
  return false;
}

/** Marks `what` (e.g. "the feature Orders") as holding unsaved changes while `dirty` is true. */
export function useUnsavedChanges(dirty: boolean, what: string): void {
  const key = useRef(Symbol(what));
  useEffect(() => {
    const id = key.current;
    if (dirty) unsaved.set(id, what);
    else unsaved.delete(id);
    return () => {
      unsaved.delete(id);
    };
  }, [dirty, what]);
}

// Reloading, closing the tab or typing another address: the browser asks with its own words.
window.addEventListener('beforeunload', (event) => {
  if (unsaved.size === 0) return;
  event.preventDefault();
  event.returnValue = '';
});
