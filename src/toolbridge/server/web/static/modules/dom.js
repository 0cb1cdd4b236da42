// Building DOM nodes without HTML strings: text always goes in as text, never as markup.

/**
 * el("button", {class: "primary", dataset: {testid: "send"}, onclick: send}, "Send")
 * Attributes named on* become event listeners; `dataset` fills data-* attributes;
 * children may be nodes, strings (added as text), or null/false (skipped); arrays are flattened.
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(node.dataset, value);
    } else if (name === "class") {
      node.className = value;
    } else if (value === true) {
      node.setAttribute(name, "");
    } else {
      node.setAttribute(name, String(value));
    }
  }
  append(node, children);
  return node;
}

export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

export function replaceChildren(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

export function byTestId(testId, root = document) {
  return root.querySelector(`[data-testid="${testId}"]`);
}
