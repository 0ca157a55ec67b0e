import { describe, expect, it } from 'vitest';
import { PlainFrameError, plainFrameError } from './errors.js';

function named(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

describe('plainFrameError', () => {
  it.each([
    [
      'data that cannot be sent (DataCloneError)',
      named('DataCloneError', "Failed to execute 'postMessage' on 'Window': SyntheticBaseEvent object could not be cloned."),
      "The page tried to send something that is not data (a browser event, a function or a page element), so nothing was sent. Often an Input's onChange={setTitle}: onChange receives the event; write onChange={(event) => setTitle(event.target.value)}. (Failed to execute 'postMessage' on 'Window': SyntheticBaseEvent object could not be cloned.)",
    ],
    [
      'a @trellis/ui component used without its import',
      new TypeError("Failed to construct 'Text': Please use the 'new' operator, this DOM object constructor cannot be called as a function."),
      "'Text' is not imported, so the page got the browser's own Text, which is no component: add import { Text } from '@trellis/ui'. (Failed to construct 'Text': Please use the 'new' operator, this DOM object constructor cannot be called as a function.)",
    ],
    ['a runtime hook used without its import', new ReferenceError('useParams is not defined'), "'useParams' is not defined: add import { useParams } from '@trellis/runtime'. (useParams is not defined)"],
    ['a name no module exports', new ReferenceError('orders is not defined'), "'orders' is not defined: declare it, or import it from one of the allowed modules. (orders is not defined)"],
    [
      'an object shown as text (React in production)',
      new Error('Minified React error #31; visit https://react.dev/errors/31?args[]=object'),
      'The page tried to show an object as text (a whole record, or an event kept by onChange={setTitle}): show one of its fields, such as {order.title}. (Minified React error #31; visit https://react.dev/errors/31?args[]=object)',
    ],
  ])('explains %s in plain words and keeps the browser\'s message', (_what, error, expected) => {
    expect(plainFrameError(error)).toBe(expected);
  });

  it.each([
    ['an error of the page', new Error('Order not found'), 'Order not found'],
    ['a rejection with a string', 'timeout', 'timeout'],
    ['an error without a message', named('AbortError', ''), 'AbortError'],
    ['nothing at all', undefined, 'undefined'],
    ['an error in plain words already', new PlainFrameError('The page tried to send something that is not data (… could not be cloned.)'), 'The page tried to send something that is not data (… could not be cloned.)'],
  ])('keeps the message of %s', (_what, error, expected) => {
    expect(plainFrameError(error)).toBe(expected);
  });
});
