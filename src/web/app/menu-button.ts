// At a phone's width the menus fold behind a Menu button in the header, a disclosure
// (aria-expanded): the feature starts right below the header. Escape closes the menus and gives
// the focus back to the button; a click elsewhere, or opening a page from them, closes them too.
// Wider, the button is hidden by app.css and the menus are a column of their own.
import { h } from '../shared/dom.js';

export interface MenuButton {
  readonly button: HTMLButtonElement;
  close(): void;
}

/** The button that shows and hides `nav` (which needs an id) inside `shell` (its data-menu says which). */
export function menuButton(shell: HTMLElement, nav: HTMLElement): MenuButton {
  const button = h('button', { type: 'button', className: 'app-menu-toggle', 'aria-controls': nav.id }, 'Menu');
  const isOpen = () => shell.dataset.menu === 'open';
  const set = (open: boolean) => {
    shell.dataset.menu = open ? 'open' : 'closed';
    button.setAttribute('aria-expanded', String(open));
  };
  set(false);
  button.addEventListener('click', () => set(!isOpen()));
  shell.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !isOpen()) return;
    set(false);
    button.focus();
  });
  shell.addEventListener('click', (event) => {
    const target = event.target as Node;
    if (isOpen() && !nav.contains(target) && !button.contains(target)) set(false);
  });
  return { button, close: () => set(false) };
}
