import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  recipients: string[];
  subject: string;
  /** The decoded plain-text body. */
  text: string;
}

export interface SmtpReceiver {
  /** `smtp://` URL of the receiver, for TRELLIS_SMTP_URL. */
  readonly url: string;
  readonly mails: ReceivedMail[];
  /** With `refuseRecipients`: the addresses it refused. */
  readonly refused: string[];
  close(): Promise<void>;
}

/**
 * A real SMTP server on loopback, without authentication, that records every message it accepts;
 * with `refuseRecipients`, one that refuses every recipient with 550 and records whom it refused.
 */
export async function startSmtpReceiver({ refuseRecipients = false } = {}): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const refused: string[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    closeTimeout: 100,
    onRcptTo(address, _session, callback) {
      if (!refuseRecipients) return callback();
      refused.push(address.address);
      callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
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
    smtp.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = smtp.server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    refused,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}

/** Just enough MIME for nodemailer's plain-text messages: unfolded headers, decoded subject and body. */
export function parseMessage(raw: string): { subject: string; headers: string; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const headers = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const subject = decodeEncodedWords(/^Subject: (.*)$/m.exec(headers)?.[1] ?? '');
  const body = raw.slice(split + 4);
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase();
  if (encoding === 'base64') return { subject, headers, text: Buffer.from(body, 'base64').toString('utf8') };
  if (encoding !== 'quoted-printable') return { subject, headers, text: body };
  return { subject, headers, text: decodeQuotedPrintable(body.replace(/=\r?\n/g, '')) };
}

function decodeEncodedWords(header: string): string {
  return header
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?Q\?(.*?)\?=/gi, (_match, word: string) => decodeQuotedPrintable(word.replace(/_/g, ' ')))
    .replace(/=\?UTF-8\?B\?(.*?)\?=/gi, (_match, word: string) => Buffer.from(word, 'base64').toString('utf8'));
}

function decodeQuotedPrintable(text: string): string {
  const bytes = text.replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

