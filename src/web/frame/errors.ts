// What went wrong in a feature's page, in words its author can act on: the browser's and React's
// messages name the symptom (DataCloneError, "Failed to construct 'Text'", a minified error number).
import { ALLOWED_FEATURE_MODULES } from '../../features/modules.js';

const NOT_DATA =
  "The page tried to send something that is not data (a browser event, a function or a page element), so nothing was sent. Often an Input's onChange={setTitle}: onChange receives the event; write onChange={(event) => setTitle(event.target.value)}.";
const OBJECT_AS_TEXT =
  'The page tried to show an object as text (a whole record, or an event kept by onChange={setTitle}): show one of its fields, such as {order.title}.';
const UNDEFINED_COMPONENT = 'The page uses a component that is undefined: check its name, and that it is imported from the module that exports it.';

/** The allowed module that exports `name`, if any. */
function moduleExporting(name: string): string | undefined {
  return ALLOWED_FEATURE_MODULES.find((module) => module.exports?.includes(name))?.name;
}

function importAdvice(name: string): string {
  const module = moduleExporting(name);
  return module ? `add import { ${name} } from '${module}'` : 'declare it, or import it from one of the allowed modules';
}

/** Plain words for a known failure, or undefined. */
function explain(name: string, message: string): string | undefined {
  if (name === 'DataCloneError' || /could not be cloned/.test(message)) return NOT_DATA;
  const construct = /Failed to construct '([A-Za-z_$][\w$]*)'/.exec(message);
  if (construct) return `'${construct[1]}' is not imported, so the page got the browser's own ${construct[1]}, which is no component: ${importAdvice(construct[1]!)}.`;
  const undefinedName = /^([A-Za-z_$][\w$]*) is not defined$/.exec(message);
  if (undefinedName) return `'${undefinedName[1]}' is not defined: ${importAdvice(undefinedName[1]!)}.`;
  if (/Objects are not valid as a React child|Minified React error #31\b/.test(message)) return OBJECT_AS_TEXT;
  if (/Element type is invalid|Minified React error #130\b/.test(message)) return UNDEFINED_COMPONENT;
  return undefined;
}

/** An error whose message is in plain words already (a data call's refusal of what is not data). */
export class PlainFrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlainFrameError';
  }
}

/**
 * The message to show for an error of a feature's page: plain words first for the failures
 * authors meet (data that cannot be sent, a component used without its import, an object shown
 * as text), then the browser's own message in parentheses; other errors keep their message.
 *
 * @example plainFrameError(new TypeError("Failed to construct 'Text': ...")) // "'Text' is not imported, ... add import { Text } from '@trellis/ui'. (Failed to construct 'Text': ...)"
 */
export function plainFrameError(error: unknown): string {
  const name = typeof error === 'object' && error !== null && 'name' in error ? String(error.name) : '';
  const message = error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error) ? String((error as { message: unknown }).message) : String(error);
  if (error instanceof PlainFrameError) return message;
  const plain = explain(name, message);
  return plain ? `${plain} (${message})` : message || name || 'The page failed';
}
