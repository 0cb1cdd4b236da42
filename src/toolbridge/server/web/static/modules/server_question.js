// A server's question inside the tool card of the call that waits on it: a sampling request to
// allow, a form to fill in (defaults pre-filled), or a page to open. `answer({action, content})`
// sends the reply and returns a promise; a refused form (its message) stays open to be corrected.

import { el, replaceChildren } from "./dom.js";

/** The question's element; `answer` sends `{action, content}`. */
export function renderServerQuestion(event, answer) {
  const status = el("span", { class: "server-question-status", role: "status", dataset: { testid: "server-question-status" } });
  const box = el("div", { class: "server-question", dataset: { testid: "server-question", kind: event.kind } });
  const fields = event.kind === "form" ? event.fields.map(renderField) : [];
  const buttons = [];
  const send = async (action, content) => {
    for (const button of buttons) button.disabled = true;
    status.textContent = "Sending…";
    try {
      await answer({ action, content });
      status.textContent = "";
    } catch (error) {
      status.textContent = error.message;
      for (const button of buttons) button.disabled = false;
    }
  };
  const button = (label, className, onclick) => {
    const made = el("button", { type: "button", class: `button ${className}`, onclick }, label);
    buttons.push(made);
    return made;
  };

  let body;
  if (event.kind === "sampling") {
    body = [
      el("p", {}, `Server ${event.server} asks the model ${event.model} for a completion (up to ${event.max_tokens} tokens):`),
      el("ul", { class: "server-question-preview" }, event.preview.map((line) => el("li", {}, el("span", { class: "muted" }, `${line.role}: `), line.text))),
      el("div", { class: "tool-approval-actions" },
        button("Allow", "primary", () => send("accept")), button("Decline", "danger", () => send("decline")), status),
    ];
  } else if (event.kind === "form") {
    body = [
      el("p", {}, `Server ${event.server} asks: ${event.message}`),
      el("div", { class: "server-question-fields" }, fields.map((field) => field.element)),
      el("div", { class: "tool-approval-actions" },
        button("Send", "primary", () => send("accept", collect(fields))),
        button("Decline", "danger", () => send("decline")),
        button("Cancel", "", () => send("cancel")),
        status),
    ];
  } else {
    body = [
      el("p", {}, `Server ${event.server} asks you to open a page: ${event.message}`),
      el("p", {}, el("a", { href: event.url, target: "_blank", rel: "noopener noreferrer" }, event.url)),
      el("div", { class: "tool-approval-actions" },
        button("Open", "primary", () => {
          window.open(event.url, "_blank", "noopener");
          return send("accept");
        }),
        button("Decline", "danger", () => send("decline")),
        button("Cancel", "", () => send("cancel")),
        status),
    ];
  }
  replaceChildren(box, body);
  return box;
}

function renderField(field) {
  const id = `field-${Math.random().toString(36).slice(2)}`;
  const label = el("label", { for: id }, field.title, field.required ? " *" : "");
  const help = field.description ? el("span", { class: "muted" }, field.description) : null;
  let input;
  let read;
  if (field.kind === "boolean") {
    input = el("input", { id, type: "checkbox", checked: field.default === true });
    read = () => input.checked;
  } else if (field.kind === "choice") {
    input = el("select", { id },
      field.required && field.default == null ? el("option", { value: "" }, "—") : null,
      !field.required ? el("option", { value: "" }, "—") : null,
      field.choices.map((choice) => el("option", { value: choice.value, selected: choice.value === field.default }, choice.label)));
    read = () => input.value || null;
  } else if (field.kind === "choices") {
    const boxes = field.choices.map((choice) => ({
      value: choice.value,
      box: el("input", { type: "checkbox", value: choice.value, checked: (field.default ?? []).includes(choice.value) }),
      label: choice.label,
    }));
    input = el("span", { id, class: "server-question-choices" }, boxes.map((b) => el("label", {}, b.box, ` ${b.label}`)));
    read = () => boxes.filter((b) => b.box.checked).map((b) => b.value);
  } else {
    const numeric = field.kind === "number" || field.kind === "integer";
    input = el("input", { id, type: numeric ? "number" : "text", step: field.kind === "integer" ? "1" : numeric ? "any" : null,
      value: field.default ?? "", placeholder: field.hint });
    read = () => (input.value === "" ? null : numeric ? Number(input.value) : input.value);
  }
  const element = el("div", { class: "server-question-field", dataset: { field: field.name } }, label, input, help);
  return { name: field.name, element, read };
}

function collect(fields) {
  const content = {};
  for (const field of fields) {
    const value = field.read();
    if (value !== null) content[field.name] = value;
  }
  return content;
}
