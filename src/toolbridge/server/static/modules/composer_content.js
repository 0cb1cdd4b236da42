// What a message carries besides its text: resources picked from the servers (the 📎 picker) and a
// server's prompt chosen from the `/` menu (typing "/" at the start of the message box opens it), with
// a field per argument. The chat view asks `attachments()` and `prompt()` when it sends.

import { el, replaceChildren } from "./dom.js";

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
      replaceChildren(
        this.picker,
        options.length ? options : el("p", { class: "muted" }, "The servers offer no resources."),
        Object.entries(listing.errors).map(([server, error]) => el("p", { class: "muted" }, `${server}: ${error}`)),
      );
    } catch (error) {
      this.picker.hidden = true;
      this.reportError(`Could not list the resources: ${error.message}`);
    }
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
          (prompt.arguments ?? []).map((argument) =>
            el("input", {
              name: argument.name,
              class: "prompt-argument",
              placeholder: argument.required ? argument.name : `${argument.name} (optional)`,
              "aria-label": `${argument.name} for /${prompt.name}`,
              required: argument.required,
              dataset: { testid: "prompt-argument" },
            }),
          ),
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

  removeButton(label, remove) {
    return el("button", { type: "button", class: "chip-remove", "aria-label": label, title: label, onclick: remove }, "×");
  }
}
