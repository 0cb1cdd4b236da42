// What a message carries besides its text: resources picked from the servers (the 📎 picker: listed
// resources, and resource templates whose variables are filled in) and a server's prompt chosen from
// the `/` menu (typing "/" at the start of the message box opens it), with a field per argument. Template
// variables and prompt arguments offer the server's completions as they are typed. The chat view asks
// `attachments()` and `prompt()` when it sends.

import { completingInput } from "./completing_input.js";
import { el, replaceChildren } from "./dom.js";
import { expandTemplate, templateVariables } from "./uri_template.js";

export class ComposerContent {
  constructor({ api, input, attachButton, picker, menu, chips, reportError }) {
    Object.assign(this, { api, input, attachButton, picker, menu, chips, reportError });
    this.attached = []; // [{server, uri, name}]
    this.chosenPrompt = null; // {server, name, arguments: [{name, required, description}]}
    this.prompts = null;
    attachButton.addEventListener("click", () => this.togglePicker());
    input.addEventListener("input", () => this.updateMenu());
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.closePopups();
    });
  }

  /** [{server, uri}] to send with the message. */
  attachments() {
    return this.attached.map(({ server, uri }) => ({ server, uri }));
  }

  /** {server, name, arguments: {key: value}} or null. */
  prompt() {
    if (!this.chosenPrompt) return null;
    const values = {};
    for (const field of this.chips.querySelectorAll('[data-testid="prompt-argument"]')) {
      if (field.value !== "") values[field.name] = field.value;
    }
    return { server: this.chosenPrompt.server, name: this.chosenPrompt.name, arguments: values };
  }

  isEmpty() {
    return this.attached.length === 0 && this.chosenPrompt === null;
  }

  clear() {
    this.attached = [];
    this.chosenPrompt = null;
    this.closePopups();
    this.renderChips();
  }

  // -- the resource picker ------------------------------------------------------------------------

  async togglePicker() {
    if (!this.picker.hidden) {
      this.picker.hidden = true;
      return;
    }
    this.menu.hidden = true;
    this.picker.hidden = false;
    replaceChildren(this.picker, el("p", { class: "muted" }, "Loading resources…"));
    try {
      const listing = await this.api.resources();
      const options = listing.resources.map((resource) =>
        el(
          "button",
          {
            type: "button",
            class: "popup-option",
            dataset: { testid: "resource-option", uri: resource.uri },
            onclick: () => this.attach(resource),
          },
          el("span", { class: "popup-option-name" }, resource.uri),
          el("span", { class: "muted" }, ` ${resource.server}${resource.mime_type ? ` · ${resource.mime_type}` : ""}`),
        ),
      );
      const templates = listing.templates.map((template) =>
        el(
          "button",
          {
            type: "button",
            class: "popup-option",
            dataset: { testid: "resource-template-option", uriTemplate: template.uri_template },
            onclick: () => this.fillTemplate(template),
          },
          el("span", { class: "popup-option-name" }, template.uri_template),
          el("span", { class: "muted" }, ` ${template.server} · template${template.description ? ` · ${template.description}` : ""}`),
        ),
      );
      const empty = options.length === 0 && templates.length === 0;
      replaceChildren(
        this.picker,
        empty ? el("p", { class: "muted" }, "The servers offer no resources.") : [options, templates],
        Object.entries(listing.errors).map(([server, error]) => el("p", { class: "muted" }, `${server}: ${error}`)),
      );
    } catch (error) {
      this.picker.hidden = true;
      this.reportError(`Could not list the resources: ${error.message}`);
    }
  }

  /** The picker becomes a form for the template's variables; "Attach" attaches the URI they make. */
  fillTemplate(template) {
    const { server, uri_template: uriTemplate } = template;
    const inputs = new Map();
    const values = () => Object.fromEntries([...inputs].map(([name, input]) => [name, input.value]));
    const preview = el("code", { dataset: { testid: "template-uri" } });
    const attachButton = el("button", { type: "button", class: "primary", disabled: true }, "Attach");
    const update = () => {
      const filled = [...inputs.values()].every((input) => input.value !== "");
      preview.textContent = expandTemplate(uriTemplate, values());
      attachButton.disabled = !filled;
    };
    const fields = templateVariables(uriTemplate).map((name) => {
      const { field, input } = completingInput({
        name,
        label: `${name} for ${uriTemplate}`,
        placeholder: name,
        required: true,
        testid: "template-variable",
        complete: async (value) => {
          const { [name]: _, ...context } = values();
          const asked = { server, template: uriTemplate, argument: name, value, context };
          return (await this.api.complete(asked)).values;
        },
        onError: (error) => this.reportError(`Could not complete ${name}: ${error.message}`),
      });
      inputs.set(name, input);
      input.addEventListener("input", update);
      input.addEventListener("change", update);
      input.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && !attachButton.disabled) attachButton.click();
      });
      return el("label", { class: "template-variable" }, el("span", {}, name), field);
    });
    attachButton.addEventListener("click", () => this.attach({ server, uri: expandTemplate(uriTemplate, values()), name: template.name }));
    replaceChildren(
      this.picker,
      el(
        "div",
        { class: "template-form", dataset: { testid: "template-form" } },
        el("p", {}, el("span", { class: "popup-option-name" }, uriTemplate), el("span", { class: "muted" }, ` ${server}`)),
        fields,
        el("p", { class: "muted" }, "URI: ", preview),
        attachButton,
      ),
    );
    update();
    inputs.values().next().value?.focus();
  }

  attach(resource) {
    if (!this.attached.some((known) => known.uri === resource.uri && known.server === resource.server)) {
      this.attached.push({ server: resource.server, uri: resource.uri, name: resource.name });
    }
    this.picker.hidden = true;
    this.renderChips();
    this.input.focus();
  }

  // -- the prompt menu ----------------------------------------------------------------------------

  async updateMenu() {
    const typed = this.input.value;
    if (!/^\/\S*$/.test(typed)) {
      this.menu.hidden = true;
      return;
    }
    try {
      this.prompts ??= (await this.api.prompts()).prompts;
    } catch (error) {
      this.reportError(`Could not list the prompts: ${error.message}`);
      return;
    }
    if (this.input.value !== typed) return; // typed on meanwhile: that input event redraws
    const wanted = typed.slice(1).toLowerCase();
    const matching = this.prompts.filter((prompt) => prompt.name.toLowerCase().startsWith(wanted));
    this.picker.hidden = true;
    this.menu.hidden = matching.length === 0;
    replaceChildren(
      this.menu,
      matching.map((prompt) =>
        el(
          "button",
          {
            type: "button",
            class: "popup-option",
            dataset: { testid: "prompt-option", name: prompt.name },
            onclick: () => this.choosePrompt(prompt),
          },
          el("span", { class: "popup-option-name" }, `/${prompt.name}`),
          el("span", { class: "muted" }, ` ${prompt.description ?? ""} (${prompt.server})`),
        ),
      ),
    );
  }

  choosePrompt(prompt) {
    this.chosenPrompt = prompt;
    this.input.value = "";
    this.menu.hidden = true;
    this.renderChips();
    const first = this.chips.querySelector('[data-testid="prompt-argument"]');
    (first ?? this.input).focus();
  }

  /** Enter while the `/` menu is open: choose its first prompt. False if the menu is closed. */
  pickFromMenu() {
    const first = this.menu.hidden ? null : this.menu.querySelector('[data-testid="prompt-option"]');
    first?.click();
    return Boolean(first);
  }

  closePopups() {
    this.menu.hidden = true;
    this.picker.hidden = true;
  }

  // -- chips --------------------------------------------------------------------------------------

  renderChips() {
    const prompt = this.chosenPrompt;
    replaceChildren(
      this.chips,
      prompt &&
        el(
          "div",
          { class: "chip prompt-chip", dataset: { testid: "prompt-chip" } },
          el("strong", {}, `/${prompt.name}`),
          (prompt.arguments ?? []).map((argument) => this.promptArgumentField(prompt, argument)),
          this.removeButton(`Remove the prompt /${prompt.name}`, () => {
            this.chosenPrompt = null;
            this.renderChips();
          }),
        ),
      this.attached.map((resource, index) =>
        el(
          "div",
          { class: "chip", dataset: { testid: "attachment-chip" } },
          el("span", {}, `📎 ${resource.uri}`),
          this.removeButton(`Remove ${resource.uri}`, () => {
            this.attached.splice(index, 1);
            this.renderChips();
          }),
        ),
      ),
    );
    this.chips.hidden = this.isEmpty();
  }

  promptArgumentField(prompt, argument) {
    return completingInput({
      name: argument.name,
      label: `${argument.name} for /${prompt.name}`,
      placeholder: argument.required ? argument.name : `${argument.name} (optional)`,
      required: argument.required,
      testid: "prompt-argument",
      complete: async (value) => {
        const { [argument.name]: _, ...context } = this.prompt().arguments;
        const asked = { server: prompt.server, prompt: prompt.name, argument: argument.name, value, context };
        return (await this.api.complete(asked)).values;
      },
      onError: (error) => this.reportError(`Could not complete ${argument.name}: ${error.message}`),
    }).field;
  }

  removeButton(label, remove) {
    return el("button", { type: "button", class: "chip-remove", "aria-label": label, title: label, onclick: remove }, "×");
  }
}
