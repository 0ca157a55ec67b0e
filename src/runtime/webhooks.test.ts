import { describe, expect, it } from 'vitest';
import { webhookReply, webhookUrl } from './webhooks.js';

const JSON_TYPE = 'application/json; charset=utf-8';

describe('webhookReply', () => {
  it.each([
    ['a returned value: 200 with it as JSON', { value: { ok: true } }, { status: 200, headers: { 'content-type': JSON_TYPE }, body: '{"ok":true}' }],
    ['nothing returned: 204 without a body', { value: undefined }, { status: 204, headers: {}, body: undefined }],
    ['respond() with a JSON body', { value: null, response: { status: 401, headers: {}, body: { error: 'bad signature' } } }, { status: 401, headers: { 'content-type': JSON_TYPE }, body: '{"error":"bad signature"}' }],
    ['respond() with text', { value: null, response: { status: 200, headers: { 'x-a': '1' }, body: 'ok' } }, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-a': '1' }, body: 'ok' }],
    ['respond() with its own content-type', { value: null, response: { status: 200, headers: { 'content-type': 'application/xml' }, body: '<ok/>' } }, { status: 200, headers: { 'content-type': 'application/xml' }, body: '<ok/>' }],
    ['respond() without a body', { value: null, response: { status: 202, headers: { 'x-a': '1' }, body: undefined } }, { status: 202, headers: { 'x-a': '1' }, body: undefined }],
  ])('answers %s', (_case, answer, reply) => {
    expect(webhookReply(answer)).toEqual(reply);
  });
});

describe('webhookUrl', () => {
  it('is the path on the base URL the request reached, the name encoded', () => {
    expect(webhookUrl('https://app.example.com', 'pay-confirm')).toBe('https://app.example.com/api/webhook/pay-confirm');
    expect(webhookUrl(undefined, 'a b')).toBe('/api/webhook/a%20b');
  });
});
