// lodash-es ships no types; features get it untyped, as plain JavaScript sees it.
declare module 'lodash-es';
