// A tiny element builder for the pages written without a framework.

type Child = Node | string | null | undefined | false;
type Props = Record<string, unknown>;

/** document.createElement with properties (or attributes for names with a dash) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.includes('-') || name === 'role') element.setAttribute(name, String(value));
    else if (name === 'style' && typeof value === 'object') Object.assign(element.style, value);
    else (element as unknown as Record<string, unknown>)[name] = value;
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(child);
  return element;
}
