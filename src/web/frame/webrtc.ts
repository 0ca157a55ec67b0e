// WebRTC reaches any host by UDP or TCP (ICE: STUN, TURN) and, in Chromium, no Content-Security-Policy
// directive governs it: the frame's policy cannot stop a peer connection, so the frame removes the
// interfaces before any feature code runs. A nested frame is no way round: the frame's policy
// sandboxes its document, so a frame it nests has an origin of its own, which feature code cannot
// reach into, and inherits that policy, so it runs only the frame's script (which starts here too)
// and this origin's script files.

/** WebRTC's interfaces (RTCPeerConnection, RTCDataChannel, RTCIceTransport, ...) and their prefixed aliases. */
const WEBRTC_INTERFACE = /^(?:webkit|moz)?RTC[A-Z]/;

/**
 * Replaces every WebRTC interface of `scope` (the frame's window) with a read-only,
 * non-configurable `undefined`: feature code can neither construct a peer connection nor put the
 * constructor back (assigning, deleting or redefining the name fails).
 *
 * @throws TypeError when a name cannot be replaced: a frame that cannot remove WebRTC must not run features.
 * @example removeWebRtc(window); typeof RTCPeerConnection // 'undefined'
 */
export function removeWebRtc(scope: object): void {
  for (const name of Object.getOwnPropertyNames(scope)) {
    if (WEBRTC_INTERFACE.test(name)) Object.defineProperty(scope, name, { value: undefined, writable: false, enumerable: false, configurable: false });
  }
}
