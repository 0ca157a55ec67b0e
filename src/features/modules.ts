// The modules feature code may import: one list, used by the validator, the authoring guide and the
// application page's frame (src/web/frame), which offers exactly these. No imports here: the
// browser bundle includes this file.

/** A module feature code may import; `exports`, when given, is the complete list of its names. */
export type AllowedModule = {
  name: string;
  description: string;
  exports?: readonly string[];
};

/** The only modules feature code may import (exact names, no subpaths). */
export const ALLOWED_FEATURE_MODULES: readonly AllowedModule[] = [
  { name: 'react', description: 'React hooks and helpers: useState, useEffect, useMemo, useCallback, useRef, useReducer, Fragment' },
  {
    name: '@trellis/runtime',
    description: "The application runtime: read and write data through the app's GraphQL API, navigate, get the signed-in user",
    exports: ['useQuery', 'useMutation', 'graphql', 'navigate', 'useCurrentUser'],
  },
  {
    name: '@trellis/ui',
    description: 'Components styled with the application theme',
    exports: ['Button', 'Card', 'Table', 'Input', 'Select', 'Stack', 'Text', 'Heading', 'Badge', 'Modal', 'Form'],
  },
  { name: 'date-fns', description: 'Date formatting and arithmetic: format, parseISO, addDays, differenceInDays, ...' },
  { name: 'lodash-es', description: 'Collection and object helpers: groupBy, sortBy, debounce, ...' },
];

