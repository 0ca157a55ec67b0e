import { TrellisError } from './errors.js';

/** How deeply objects and arrays may nest in a request body. */
export const JSON_MAX_DEPTH = 100;

/** Throws BAD_INPUT when `text` nests objects and arrays deeper than `maxDepth`. */
export function assertJsonDepth(text: string, maxDepth = JSON_MAX_DEPTH): void {
  if (nestingDepth(text) > maxDepth) throw new TrellisError('BAD_INPUT', `Request body nests objects and arrays deeper than ${maxDepth} levels`, { maxDepth });
}

/**
 * Parses JSON text from a request, refusing text nested deeper than `JSON_MAX_DEPTH` before
 * parsing it (deep values overflow the stack wherever they are later walked or serialised).
 * Throws BAD_INPUT for malformed or too deeply nested text.
 *
 * @example parseJsonText('{"a":[1]}') // { a: [1] }
 */
export function parseJsonText(text: string, maxDepth = JSON_MAX_DEPTH): unknown {
  assertJsonDepth(text, maxDepth);
  try {
    return JSON.parse(text);
  } catch {
    throw new TrellisError('BAD_INPUT', 'Request body is not valid JSON');
  }
}

/** The deepest nesting of `[` and `{` outside strings; in one linear pass. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return deepest;
}
