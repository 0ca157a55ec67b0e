import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookSignature } from './webhook-signing.js';

describe('webhookSignature', () => {
  it("signs GitHub's documented example body as GitHub does", () => {
    // https://docs.github.com/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
    expect(webhookSignature('github', "It's a Secret to Everybody", 'Hello, World!')).toEqual({
      name: 'x-hub-signature-256',
      value: 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    });
  });

  it("signs '<t>.<raw body>' for Stripe with t the given time in seconds", () => {
    const body = '{"amount":125.50,"name":"caf\\u00e9"}';
    const header = webhookSignature('stripe', 'whsec_test', body, 1_764_050_000_999);
    expect(header.name).toBe('stripe-signature');
    expect(header.value).toBe(`t=1764050000,v1=${createHmac('sha256', 'whsec_test').update(`1764050000.${body}`).digest('hex')}`);
  });
});
