import { createServer, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { parseMessage } from '../helpers/smtp.js';
import { waitFor } from '../helpers/wait.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailSender } from '../../src/platform/mail.js';
import { OWNER } from '../helpers/env.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

type Gql = ReturnType<typeof graphqlClient>;

interface ReceivedMail {
  recipients: string[];
  subject: string;
  headers: string;
  text: string;
}

interface Receiver {
  readonly port: number;
  readonly mails: ReceivedMail[];
  close(): Promise<void>;
}

const SMTP_USER = 'mailer';
const SMTP_PASSWORD = 's3cret-smtp-pass';
const REJECTED_DOMAIN = 'rejected.invalid';
const HOOK = '_id name contentSha256 version';
const CREATE = `mutation($name: String!, $content: String!) { createHook(name: $name, type: "webHook", content: $content) { ${HOOK} } }`;
const UPDATE = `mutation($_id: ID!, $content: String) { updateHook(_id: $_id, content: $content) { ${HOOK} } }`;
const CODE = 'async function hook(request) { return { status: 200 }; }';

/** A real SMTP server on loopback that accepts SMTP_USER's login and records every message. */
async function startReceiver(port = 0): Promise<Receiver> {
  const mails: ReceivedMail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    closeTimeout: 100,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: SMTP_USER });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (address.address.endsWith(`@${REJECTED_DOMAIN}`)) callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push({ recipients: session.envelope.rcptTo.map((r) => r.address), ...parseMessage(Buffer.concat(chunks).toString('utf8')) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    smtp.server.once('error', reject);
    smtp.listen(port, '127.0.0.1', () => resolve());
  });
  const address = smtp.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    mails,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}

function smtpUrl(port: number): string {
  return `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${port}`;
}

function outbox(server: TestServer, subject: string) {
  return server.server.services.ctx.db.selectFrom('mail_outbox').selectAll().where('subject', '=', subject).orderBy('to_address').execute();
}

async function createHook(gql: Gql, name: string, content = CODE) {
  return (await gqlData(gql, CREATE, { name, content })).createHook;
}

describe('owner e-mail over SMTP', () => {
  let receiver: Receiver;
  let server: TestServer;
  let ownerGql: Gql;
  const mailsWithSubject = (subject: string) => receiver.mails.filter((mail) => mail.subject === subject);

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer({ TRELLIS_SMTP_URL: smtpUrl(receiver.port), TRELLIS_MAIL_RETRY_BASE_MS: '100' });
    ownerGql = graphqlClient(server.url, await login(server.url));
    const db = server.server.services.ctx.db;
    for (const [email, disabled] of [['co-owner@example.com', false], ['retired-owner@example.com', true]] as const) {
      const user = await gqlData(ownerGql, 'mutation($e: String!) { createUser(email: $e, password: "password-123", role: "admin") { _id } }', { e: email });
      await db.updateTable('users').set({ is_owner: true, disabled }).where('id', '=', user.createUser._id).execute();
    }
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('sends each owner, a disabled one too, one e-mail on hook creation naming the hook, its author and the sha256 of the stored code', async () => {
    const hook = await createHook(ownerGql, 'Created_hook');
    const mails = await waitFor('three creation mails', () => {
      const found = mailsWithSubject('Hook "Created_hook" created');
      return found.length >= 3 ? found : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mailsWithSubject('Hook "Created_hook" created')).toHaveLength(3);
    expect(mails.flatMap((mail) => mail.recipients).sort()).toEqual(['co-owner@example.com', OWNER.email, 'retired-owner@example.com']);
    for (const mail of mails) {
      expect(mail.headers).toMatch(/^From: Trellis <trellis@localhost>$/m);
      expect(mail.text).toContain('The hook "Created_hook" was created.');
      expect(mail.text).toContain(`Author: ${OWNER.email}`);
      expect(mail.text).toContain(`SHA-256 of the stored code: ${hook.contentSha256}`);
      expect(mail.text).not.toContain(CODE);
    }
    const rows = await waitFor('rows marked sent', async () => {
      const found = await outbox(server, 'Hook "Created_hook" created');
      return found.every((row) => row.sent_at) ? found : undefined;
    });
    expect(rows.map((row) => ({ to: row.to_address, attempts: row.attempts, lastError: row.last_error }))).toEqual([
      { to: 'co-owner@example.com', attempts: 0, lastError: null },
      { to: OWNER.email, attempts: 0, lastError: null },
      { to: 'retired-owner@example.com', attempts: 0, lastError: null },
    ]);
  });

  it('sends each owner a "modified" e-mail with the new code hash when the hook is updated', async () => {
    const hook = await createHook(ownerGql, 'Updated_hook');
    const updated = (await gqlData(ownerGql, UPDATE, { _id: hook._id, content: `${CODE}\n// v2` })).updateHook;
    expect(updated.contentSha256).not.toBe(hook.contentSha256);
    const mails = await waitFor('three modification mails', () => {
      const found = mailsWithSubject('Hook "Updated_hook" modified');
      return found.length >= 3 ? found : undefined;
    });
    expect(mails.flatMap((mail) => mail.recipients).sort()).toEqual(['co-owner@example.com', OWNER.email, 'retired-owner@example.com']);
    for (const mail of mails) {
      expect(mail.text).toContain('The hook "Updated_hook" was modified.');
      expect(mail.text).toContain('Version: 2');
      expect(mail.text).toContain(`SHA-256 of the stored code: ${updated.contentSha256}`);
    }
    await waitFor('modification rows marked sent', async () => (await outbox(server, 'Hook "Updated_hook" modified')).every((row) => row.sent_at));
  });

  it('delivers each queued e-mail exactly once when several senders share the database', async () => {
    const ctx = server.server.services.ctx;
    const addresses = Array.from({ length: 45 }, (_, i) => `reader-${i}@example.com`);
    await ctx.db
      .insertInto('mail_outbox')
      .values(addresses.map((to) => ({ to_address: to, subject: 'Shared outbox', body: 'Hello', next_attempt_at: new Date() })))
      .execute();
    const replicas = [new MailSender(ctx, smtpUrl(receiver.port)), new MailSender(ctx, smtpUrl(receiver.port))];
    await Promise.all(replicas.map((replica) => replica.start()));
    try {
      await waitFor('every shared mail sent', async () => (await outbox(server, 'Shared outbox')).every((row) => row.sent_at));
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop()));
    }
    const recipients = mailsWithSubject('Shared outbox').flatMap((mail) => mail.recipients);
    expect(recipients.sort()).toEqual([...addresses].sort());
  });

  it('stops retrying a rejected e-mail after its tenth attempt and keeps it unsent with the error', async () => {
    const db = server.server.services.ctx.db;
    const to = `nobody@${REJECTED_DOMAIN}`;
    await db.insertInto('mail_outbox').values({ to_address: to, subject: 'Undeliverable', body: 'Hello', attempts: 9, next_attempt_at: new Date() }).execute();
    await waitFor('the tenth attempt', async () => (await outbox(server, 'Undeliverable'))[0]?.attempts === 10);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const [row] = await outbox(server, 'Undeliverable');
    expect(row).toMatchObject({ attempts: 10, sent_at: null });
    expect(row?.last_error).toContain('550');
    expect(receiver.mails.some((mail) => mail.recipients.includes(to))).toBe(false);
  });
});

describe('owner e-mail while the mail server is down', () => {
  let blackHole: Server;
  const heldSockets: Socket[] = [];
  let port: number;
  let server: TestServer;
  let ownerGql: Gql;
  let receiver: Receiver | undefined;

  beforeAll(async () => {
    blackHole = createServer((socket) => heldSockets.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    port = (blackHole.address() as { port: number }).port;
    server = await startTestServer({ TRELLIS_SMTP_URL: smtpUrl(port), TRELLIS_MAIL_RETRY_BASE_MS: '100' });
    ownerGql = graphqlClient(server.url, await login(server.url));
  });
  afterAll(async () => {
    for (const socket of heldSockets) socket.destroy();
    blackHole?.close(() => {});
    await server?.close();
    await receiver?.close();
  });

  it('answers a hook write at once while the mail server hangs, leaving its e-mail queued', async () => {
    await createHook(ownerGql, 'First_outage_hook');
    await waitFor('the sender to connect to the hanging server', () => heldSockets.length > 0);
    const started = Date.now();
    const hook = await createHook(ownerGql, 'Second_outage_hook');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(hook.version).toBe(1);
    const [row] = await outbox(server, 'Hook "Second_outage_hook" created');
    expect(row).toMatchObject({ to_address: OWNER.email, sent_at: null });
  });

  it('records each failed attempt without the SMTP password and delivers the e-mails once the server is back', async () => {
    for (const socket of heldSockets) socket.destroy();
    await new Promise<void>((resolve) => blackHole.close(() => resolve()));
    const failed = await waitFor('failed attempts recorded', async () => {
      const rows = await outbox(server, 'Hook "Second_outage_hook" created');
      return rows.every((row) => row.attempts > 0 && row.last_error) ? rows : undefined;
    });
    for (const row of failed) {
      expect(row.sent_at).toBeNull();
      expect(row.last_error).not.toContain(SMTP_PASSWORD);
    }
    const restarted = await startReceiver(port);
    receiver = restarted;
    await waitFor('queued mails delivered', async () => {
      const rows = [...(await outbox(server, 'Hook "First_outage_hook" created')), ...(await outbox(server, 'Hook "Second_outage_hook" created'))];
      return rows.every((row) => row.sent_at);
    });
    expect(restarted.mails.map((mail) => mail.subject).sort()).toEqual([
      'Hook "First_outage_hook" created',
      'Hook "Second_outage_hook" created',
    ]);
  });
});
