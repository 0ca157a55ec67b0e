// The modules loaded beside the frame's main script register themselves here (one global the
// frame reads; the frame's scripts are all this origin's).

type Registry = Record<string, unknown>;
const KEY = '__trellisModules';

export function registerModule(name: string, value: unknown): void {
  const scope = globalThis as unknown as Record<string, Registry | undefined>;
  (scope[KEY] ??= {})[name] = value;
}

export function registeredModule(name: string): unknown {
  return (globalThis as unknown as Record<string, Registry | undefined>)[KEY]?.[name];
}
