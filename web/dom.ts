/**
 * Building DOM without HTML strings: every text goes in as a text node, so nothing the model, a
 * tool or a web page wrote is ever parsed as markup (the page's whole defence, with the CSP).
 */

type Child = Node | string | null | undefined | false;

/** Creates an element with attributes (plain strings, set with setAttribute) and children (strings become text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

/** Removes every child of an element. */
export function clear(element: Element): void {
  element.replaceChildren();
}
