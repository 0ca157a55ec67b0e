// esbuild bundles the style sheets a page imports for their effect (scripts/build-web.mjs).
declare module '*.css';
