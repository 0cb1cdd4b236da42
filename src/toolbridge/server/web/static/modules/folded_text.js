// Long text (an error with its traceback, say) folded to its first line; a click shows all of it.

import { el } from "./dom.js";

const SHORT_CHARS = 120;

export function foldedText(text, { className = "", testid = null } = {}) {
  const classes = `folded-text ${className}`.trim();
  if (text.length <= SHORT_CHARS && !text.includes("\n")) {
    return el("span", { class: classes, dataset: testid ? { testid } : {} }, text);
  }
  return el(
    "details",
    { class: classes, dataset: testid ? { testid } : {} },
    el("summary", { title: "Show the full text" }, el("span", { class: "folded-preview" }, text.split("\n", 1)[0])),
    el("pre", { class: "folded-full" }, text),
  );
}
