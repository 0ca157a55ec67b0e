import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchBrowser, PHONE, screenshot, seriousAxeViolations, UI_WAIT_MS } from '../helpers/browser.js';
import { openDesignerMenu, openSection } from '../helpers/designer.js';
import { OWNER } from '../helpers/env.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The designer on a bad day (issue 21), in Chromium as a person meets it: the server stopped while
 * a section not opened before is opened, typed code about to be lost, an editor still arriving, and
 * every dialog and inline form by keyboard alone; at a phone's width, the menu.
 */
let server: TestServer;
let browser: Browser;
let owner: ReturnType<typeof graphqlClient>;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createFeature(name: "Notes", customCode: "export default function Notes() { return null; }") { _id } }');
  await gqlData(owner, 'mutation { createFeature(name: "Other", customCode: "export default function Other() { return null; }") { _id } }');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signIn(viewport: { width: number; height: number } = DESKTOP, path = '/'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(UI_WAIT_MS);
  const page = await context.newPage();
  await page.goto(`${server.url}${path}`);
  await page.getByLabel('Email').fill(OWNER.email);
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Designer' }).waitFor();
  return { context, page };
}

/** The accessible text of what has the focus: its label, name or text. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    if (!element || element === document.body) return 'body';
    return element.getAttribute('aria-label') ?? (element as HTMLInputElement).labels?.[0]?.textContent ?? element.textContent?.trim() ?? element.tagName;
  });
}

async function replaceCode(page: Page, code: string) {
  await page.getByRole('textbox', { name: 'Feature code' }).click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(code);
}

describe('the designer on a bad day', () => {
  it('asks before typed code is lost: moving to another section, opening another feature, closing the page', async () => {
    const { context, page } = await signIn(DESKTOP, '/#/features/notes');
    await page.getByRole('textbox', { name: 'Feature code' }).waitFor();
    const code = 'export default function Notes() { return <p>typed, not saved</p>; }';
    await replaceCode(page, code);
    await page.getByText('Unsaved changes').waitFor();

    // Another section: the question names what would be lost; "stay" keeps the address and the code.
    const questions: string[] = [];
    page.once('dialog', (dialog) => (questions.push(dialog.message()), void dialog.dismiss()));
    await page.getByRole('navigation', { name: 'Designer' }).getByRole('link', { name: 'Tables', exact: true }).click();
    await expect.poll(() => questions).toEqual(['You have unsaved changes in the feature Notes. Leave and lose them?']);
    // The dialog event comes before the answer is handled: the address is put back a moment later.
    await expect.poll(() => page.evaluate(() => location.hash)).toBe('#/features/notes');
    expect(await page.getByRole('heading', { level: 1, name: 'Features' }).isVisible()).toBe(true);
    expect(await page.getByRole('textbox', { name: 'Feature code' }).innerText()).toContain('typed, not saved');

    // Another feature of the same section asks too; agreeing moves on.
    page.once('dialog', (dialog) => (questions.push(dialog.message()), void dialog.accept()));
    await page.getByRole('list', { name: 'Features' }).getByRole('link', { name: /Other/ }).click();
    await page.getByRole('article', { name: 'Feature Other' }).waitFor();
    expect(questions).toHaveLength(2);
    // Nothing unsaved now: moving asks nothing.
    await openSection(page, 'Tables');
    expect(questions).toHaveLength(2);

    // Closing (or reloading) the page with unsaved code: the browser asks (beforeunload).
    await page.goto(`${server.url}/#/features/notes`);
    await replaceCode(page, code);
    await page.getByText('Unsaved changes').waitFor();
    const kinds: string[] = [];
    page.on('dialog', (dialog) => (kinds.push(dialog.type()), void dialog.dismiss()));
    await page.close({ runBeforeUnload: true });
    await expect.poll(() => kinds).toEqual(['beforeunload']);
    await context.close();
  });

  it('keeps Save, Publish and Delete disabled until the editor has arrived', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    context.setDefaultTimeout(UI_WAIT_MS);
    const page = await context.newPage();
    // The editor's code is held back, as on a slow network, until the test lets it through.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/web\/designer\/chunks\/editor-[^/]+\.js$/, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${server.url}/#/features/notes`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Loading the editor…').waitFor();
    for (const name of ['Save draft', 'Publish', 'Delete']) expect(await page.getByRole('button', { name, exact: true }).isDisabled(), name).toBe(true);
    release();
    await page.getByRole('textbox', { name: 'Feature code' }).waitFor();
    for (const name of ['Save draft', 'Delete']) await expect.poll(() => page.getByRole('button', { name, exact: true }).isEnabled(), { message: name }).toBe(true);
    await context.close();
  });

  it('dialogs and inline forms by keyboard: focus goes in, stays in, Escape closes, focus comes back', async () => {
    const { context, page } = await signIn();
    // The first Tab stop skips to the content.
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('MAIN');

    // Change password: a modal dialog; Tab stays inside; Escape closes it; the focus is back on its button.
    const opener = page.getByRole('button', { name: 'Change password' });
    await opener.click();
    const dialog = page.getByRole('dialog', { name: 'Change your password' });
    await dialog.waitFor();
    expect(await focused(page)).toBe('Current password');
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press('Tab');
      expect(await dialog.evaluate((element) => element.contains(document.activeElement))).toBe(true);
    }
    expect(await page.locator('main').count()).toBe(1);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await focused(page)).toBe('Change password');

    // The delete confirmation focuses Cancel (Enter twice does not delete); Escape answers no.
    await page.goto(`${server.url}/#/features/other`);
    const remove = page.getByRole('button', { name: 'Delete', exact: true });
    await expect.poll(() => remove.isEnabled()).toBe(true);
    await remove.focus();
    await page.keyboard.press('Enter');
    const question = page.getByRole('group', { name: 'Delete the feature Other?' });
    await question.waitFor();
    expect(await focused(page)).toBe('Cancel');
    await page.keyboard.press('Enter');
    await question.waitFor({ state: 'detached' });
    expect(await focused(page)).toBe('Delete');
    await page.keyboard.press('Enter');
    await question.waitFor();
    await page.keyboard.press('Escape');
    await question.waitFor({ state: 'detached' });
    expect(await focused(page)).toBe('Delete');
    expect((await gqlData(owner, '{ feature(_id: "other") { _id } }')).feature).toEqual({ _id: 'other' });

    // Saving keeps the focus on Save draft (it is busy, then back).
    await replaceCode(page, 'export default function Other() { return <p>saved</p>; }');
    await page.getByRole('button', { name: 'Save draft' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText(/^Saved version \d+ as a draft$/).waitFor();
    await expect.poll(() => focused(page)).toBe('Save draft');

    // The inline New table form: Escape closes it and the focus is back on its button; Create leaves the focus in the page.
    await openSection(page, 'Tables');
    await page.getByRole('button', { name: 'New table' }).click();
    await page.getByRole('form', { name: 'New table' }).waitFor();
    expect(await focused(page)).toBe('Name of the new table');
    await page.keyboard.press('Escape');
    await page.getByRole('form', { name: 'New table' }).waitFor({ state: 'detached' });
    expect(await focused(page)).toBe('New table');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Keyboard');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keyboard', level: 2 }).waitFor();
    expect(await focused(page)).not.toBe('body');

    // Signing out leaves the focus on the sign-in form's first field.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await focused(page)).toBe('Email');
    await context.close();
  });

  it('the session-ended dialog holds the focus and is the only main', async () => {
    const { context, page } = await signIn(DESKTOP, '/#/features/notes');
    await page.getByRole('textbox', { name: 'Feature code' }).waitFor();
    await replaceCode(page, 'export default function Notes() { return <p>kept</p>; }');
    // The session ends after the typing. The check of what was typed may still call (and meet the
    // dialog first): the save is then clicked under the dialog, as a click event, not as a pointer.
    await page.evaluate(() => localStorage.setItem('trellis.session', JSON.stringify({ ...JSON.parse(localStorage.getItem('trellis.session')!), token: 'expired' })));
    await page.getByRole('button', { name: 'Save draft' }).dispatchEvent('click');
    const dialog = page.getByRole('dialog', { name: 'Sign in to Trellis' });
    await dialog.waitFor();
    expect(await focused(page)).toBe('Email');
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      expect(await dialog.evaluate((element) => element.contains(document.activeElement))).toBe(true);
    }
    // Escape does not dismiss it: the page cannot work without a session.
    await page.keyboard.press('Escape');
    expect(await dialog.isVisible()).toBe(true);
    expect(await page.locator('main').count()).toBe(1);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await context.close();
  });

  it('at a phone width the sections fold behind a menu button, usable by keyboard', async () => {
    const { context, page } = await signIn(PHONE);
    const nav = page.getByRole('navigation', { name: 'Designer' });
    const menu = nav.getByRole('button', { name: 'Menu' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.getByRole('link').count()).toBe(0);
    // The section starts near the top: the header and the folded navigation are a small band.
    const top = await page.getByRole('heading', { level: 1, name: 'Features' }).evaluate((element) => element.getBoundingClientRect().top);
    expect(top).toBeLessThan(160);
    await menu.focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await nav.getByRole('link', { name: 'Tables', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Escape');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await focused(page)).toBe('Menu');
    // A section chosen from the menu closes it.
    await openDesignerMenu(page);
    await nav.getByRole('link', { name: 'Tables', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Tables' }).waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'designer-menu-phone');
    await context.close();
  });

  // Last: it stops the server and starts it again on the same port and data.
  it('a section opened while the server is stopped says so with Retry, and loads by itself when the server is back', async () => {
    const { context, page } = await signIn();
    await page.getByRole('heading', { level: 1, name: 'Features' }).waitFor();
    await server.stop();

    // A section never opened before: its code cannot arrive. The page stays, says why, offers Retry.
    await page.getByRole('navigation', { name: 'Designer' }).getByRole('link', { name: 'Hooks', exact: true }).click();
    const failure = page.getByRole('main').getByRole('alert').filter({ hasText: 'The Hooks section could not be loaded.' });
    await failure.waitFor();
    // The banner says once for the page that the server is away; the section says only what happens to it.
    expect(await failure.textContent()).toBe('The Hooks section could not be loaded. It loads by itself as soon as the server answers.Retry');
    await failure.getByRole('button', { name: 'Retry' }).waitFor();
    const banner = page.getByRole('alert').filter({ hasText: 'Nothing you typed is lost.' });
    await banner.waitFor();
    expect(await banner.textContent()).toContain('The server cannot be reached. This page tries again by itself as soon as it answers.');
    expect(await page.getByText('The server cannot be reached.').count()).toBe(1);
    expect(await page.getByText('Loading…').count()).toBe(0);
    expect(await page.getByRole('navigation', { name: 'Designer' }).getByRole('link').count()).toBeGreaterThan(5);
    // Retry while the server is still away: still the same message, nothing blank.
    await failure.getByRole('button', { name: 'Retry' }).click();
    await failure.waitFor();
    await screenshot(page, 'designer-server-away');

    await server.start();
    // No click: the page finds the server back and loads the section.
    await page.getByRole('heading', { level: 1, name: 'Hooks' }).waitFor({ timeout: 30_000 });
    await page.getByRole('alert').filter({ hasText: 'Nothing you typed is lost.' }).waitFor({ state: 'detached' });

    // The same with a section's data: the list that failed loads again by itself.
    await openSection(page, 'Features');
    await server.stop();
    await page.getByLabel('Search features').fill('Not');
    const listFailure = page.getByRole('main').getByRole('alert').filter({ hasText: 'It loads by itself as soon as the server answers.' });
    await listFailure.waitFor();
    expect(await page.getByText('The server cannot be reached.').count()).toBe(1);
    expect(await page.getByText('Loading…').count()).toBe(0);
    await server.start();
    await page.getByRole('list', { name: 'Features' }).getByRole('link', { name: /Notes/ }).waitFor({ timeout: 30_000 });
    await listFailure.waitFor({ state: 'detached' });
    await context.close();
  });
});
