// A text field that offers the server's suggestions (MCP `completion/complete`) as the person types:
// a resource template's variable or a prompt's argument. Suggestions are buttons under the field;
// choosing one fills it in.

import { el, replaceChildren } from "./dom.js";

/**
 * completingInput({name, label, placeholder, required, testid, complete: async (value) => [values]})
 * -> {field, input}: `field` to place in the page, `input` to read.
 */
export function completingInput({ name, label, placeholder, required = false, testid, complete, onError }) {
  const input = el("input", {
    name,
    placeholder,
    required,
    autocomplete: "off",
    "aria-label": label,
    class: "prompt-argument",
    dataset: { testid },
  });
  const suggestions = el("div", { class: "suggestions", role: "listbox", dataset: { testid: "suggestions" }, hidden: true });
  const show = (values) => {
    replaceChildren(
      suggestions,
      values.map((value) =>
        el(
          "button",
          {
            type: "button",
            role: "option",
            class: "popup-option",
            dataset: { testid: "suggestion" },
            // Before the field loses focus (and the list closes): a click would come too late.
            onmousedown: (event) => event.preventDefault(),
            onclick: () => {
              input.value = value;
              show([]);
              input.dispatchEvent(new Event("change"));
              input.focus();
            },
          },
          value,
        ),
      ),
    );
    suggestions.hidden = values.length === 0;
  };
  const refresh = async () => {
    const typed = input.value;
    let values;
    try {
      values = await complete(typed);
    } catch (error) {
      onError?.(error);
      return;
    }
    if (input.value !== typed || document.activeElement !== input) return; // stale: a newer input redraws
    show(values.filter((value) => value !== typed));
  };
  input.addEventListener("input", refresh);
  input.addEventListener("focus", refresh);
  input.addEventListener("blur", () => show([]));
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") show([]);
  });
  return { field: el("span", { class: "completing-field" }, input, suggestions), input };
}
