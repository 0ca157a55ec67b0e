import { createHmac } from 'node:crypto';
import type { WebhookSigningScheme } from './schema.js';

/** One header a provider adds to its call, lower-case name. */
export interface SignatureHeader {
  name: string;
  value: string;
}

/**
 * The header a provider would send with `rawBody`, signed with `secret`, for a webhook's test run:
 * - `stripe`: `stripe-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<rawBody>">`;
 * - `github`: `x-hub-signature-256: sha256=<hex HMAC-SHA256 of rawBody>`.
 * The hook guide's examples check exactly these. `now` (milliseconds) is the time Stripe's `t` names.
 *
 * @example webhookSignature('github', "It's a Secret to Everybody", 'Hello, World!')
 * // { name: 'x-hub-signature-256', value: 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' }
 */
export function webhookSignature(scheme: WebhookSigningScheme, secret: string, rawBody: string, now: number = Date.now()): SignatureHeader {
  if (scheme === 'stripe') {
    const t = Math.floor(now / 1000);
    return { name: 'stripe-signature', value: `t=${t},v1=${hmacSha256Hex(secret, `${t}.${rawBody}`)}` };
  }
  return { name: 'x-hub-signature-256', value: `sha256=${hmacSha256Hex(secret, rawBody)}` };
}

function hmacSha256Hex(secret: string, data: string): string {
  return createHmac('sha256', secret).update(data, 'utf8').digest('hex');
}
