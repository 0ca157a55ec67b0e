import { describe, expect, it } from 'vitest';
import { removeWebRtc } from './webrtc.js';

/** A stand-in for the frame's window: WebRTC interfaces as the browser defines them, beside other globals. */
function windowLike(): Record<string, unknown> {
  const scope: Record<string, unknown> = {};
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCIceTransport', 'mozRTCPeerConnection', 'fetch', 'RTCx', 'Rectangle']) {
    Object.defineProperty(scope, name, { value: function Interface() {}, writable: true, enumerable: false, configurable: true });
  }
  return scope;
}

describe('removeWebRtc', () => {
  it('leaves every WebRTC interface and prefixed alias undefined, and the other globals as they were', () => {
    const scope = windowLike();
    const fetch = scope.fetch;
    removeWebRtc(scope);
    expect(['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCIceTransport', 'mozRTCPeerConnection'].map((name) => scope[name])).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(scope.fetch).toBe(fetch);
    expect(typeof scope.RTCx).toBe('function');
    expect(typeof scope.Rectangle).toBe('function');
  });

  it.each([
    ['assigning it', (scope: Record<string, unknown>) => (scope.RTCPeerConnection = function Restored() {})],
    ['redefining it', (scope: Record<string, unknown>) => Object.defineProperty(scope, 'RTCPeerConnection', { value: function Restored() {} })],
    ['deleting it, to define it again', (scope: Record<string, unknown>) => delete scope.RTCPeerConnection],
  ])('refuses %s', (_how, restore) => {
    const scope = windowLike();
    removeWebRtc(scope);
    expect(() => restore(scope)).toThrow(TypeError);
    expect(scope.RTCPeerConnection).toBeUndefined();
  });

  it('throws, so that the frame does not start, when an interface cannot be removed', () => {
    const scope = {};
    Object.defineProperty(scope, 'RTCPeerConnection', { value: function Interface() {}, configurable: false });
    expect(() => removeWebRtc(scope)).toThrow(TypeError);
  });
});
