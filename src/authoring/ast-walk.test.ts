import { parse } from '@babel/parser';
import { describe, expect, it } from 'vitest';
import { checkGlobalAccess, isBound, walk, type GlobalRules, type Visit } from './ast-walk.js';

const program = (code: string) => parse(code, { sourceType: 'module', plugins: ['jsx'] }).program;

function visits(code: string): Visit[] {
  const all: Visit[] = [];
  walk(program(code), (visit) => all.push(visit));
  return all;
}

/** The scope in which the last identifier named `name` is evaluated sees `name` as declared. */
function lastUseIsBound(code: string, name: string): boolean {
  const uses = visits(code).filter(({ node }) => node.type === 'Identifier' && node.name === name);
  const last = uses.at(-1)!;
  return isBound(last.scope, name);
}

const RULES: GlobalRules = {
  aliases: new Set(['window']),
  names: new Map([['fetch', 'no fetch']]),
  members: new Map([['document.cookie', 'no cookie']]),
};

describe('walk', () => {
  it('visits nodes in source order', () => {
    const names = visits('a; b(c); d.e; <F g={h} />;').flatMap(({ node }) =>
      node.type === 'Identifier' || node.type === 'JSXIdentifier' ? [node.name] : [],
    );
    expect(names).toEqual(['a', 'b', 'c', 'd', 'e', 'F', 'g', 'h']);
  });

  it('gives each node its parent and the key it sits under', () => {
    const call = visits('f(x);').find(({ node }) => node.type === 'Identifier' && node.name === 'x')!;
    expect({ parent: call.parent?.type, key: call.key }).toEqual({ parent: 'CallExpression', key: 'arguments' });
  });

  it.each([
    ['a parameter', 'function f(x) { x; }', 'x', true],
    ['a destructured parameter with a default', 'const f = ({ a: [x = 1] }) => x;', 'x', true],
    ['a var hoisted out of a block', 'function f() { x; if (y) { var x = 1; } }', 'x', true],
    ['a var inside a nested function, seen outside it', 'function f() { function g() { var x; } x; }', 'x', false],
    ['a let outside its block', '{ let x = 1; } x;', 'x', false],
    ['a let inside its block', '{ let x = 1; x; }', 'x', true],
    ['a function declared after its use', 'x(); function x() {}', 'x', true],
    ['a catch parameter', 'try {} catch (x) { x; }', 'x', true],
    ['a catch parameter after the catch', 'try {} catch (x) {} x;', 'x', false],
    ['a for-let binding', 'for (let x = 0; x < 1; x++) {}', 'x', true],
    ['a for-of binding', 'for (const [x] of list) x;', 'x', true],
    ['a class expression name inside the class', 'const C = class X { m() { return X; } };', 'X', true],
    ['an import binding', "import { x } from 'm'; x;", 'x', true],
    ['a switch case declaration', 'switch (v) { case 1: let x; x; }', 'x', true],
    ['a name declared nowhere', 'x;', 'x', false],
  ])('resolves %s', (_what, code, name, bound) => {
    expect(lastUseIsBound(code, name)).toBe(bound);
  });
});

describe('checkGlobalAccess', () => {
  const findings = (code: string) => visits(code).flatMap((visit) => checkGlobalAccess(visit, RULES) ?? []);

  it.each([
    ['a direct read', 'fetch;', 1],
    ['a read through the alias', 'window.fetch;', 1],
    ['a read through a repeated alias', 'window.window.fetch;', 1],
    ['a forbidden member', 'document.cookie.length;', 1],
    ['a dynamic property of the alias', 'window[name];', 1],
    ['a shadowed name', 'const fetch = 1; fetch;', 0],
    ['a shadowed alias', 'const window = {}; window.fetch;', 0],
    ['an unrelated member', 'api.fetch; window.location;', 0],
  ])('reports %s', (_what, code, count) => {
    expect(findings(code)).toHaveLength(count);
  });

  it('handles a member chain 50,000 deep without overflowing or slowing down', () => {
    const started = performance.now();
    expect(findings(`window${'.a'.repeat(50_000)};`)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
