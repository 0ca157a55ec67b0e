// Set by scripts/build-web.mjs: the version of the built frame document, part of its URL.
declare const __FRAME_VERSION__: string;
