// The chat's model: the models a chat may use (the server's config), shown in the chat's header. A chat
// that exists is switched at once (its next run answers with the model); a new chat is created with it.

import { el, replaceChildren } from "./dom.js";

export class ModelPicker {
  constructor({ select, api, reportError }) {
    this.select = select;
    this.api = api;
    this.reportError = reportError;
    this.chat = null;
    this.agent = null;
    this.models = [];
    this.defaultModel = null;
    this.forNewChats = ""; // what was picked while no chat was open: kept for the next new chat
    this.saved = Promise.resolve(); // a message sent right after a switch waits for it
    select.addEventListener("change", () => {
      this.saved = this.changed();
    });
  }

  async load() {
    const offered = await this.api.models();
    this.models = offered.models;
    this.defaultModel = offered.default; // what an agent without a model of its own uses
    this.select.closest("[data-model-picker]").hidden = this.models.length === 0;
    this.render();
  }

  /** The picker for `chat` (null: a new chat) with `agent`, whose model is the first choice. */
  show(chat, agent) {
    this.chat = chat;
    this.agent = agent;
    this.render();
  }

  /** The model a new chat is created with; null: its agent's. */
  get chosen() {
    return this.forNewChats || null;
  }

  render() {
    const ownModel = this.agent?.model ?? this.defaultModel ?? "default";
    replaceChildren(
      this.select,
      el("option", { value: "" }, `Agent's model (${ownModel})`),
      this.models.map((model) => el("option", { value: model.name }, model.name)),
    );
    // A re-render (the page routing to a new chat, the agent changed) keeps what was picked.
    this.select.value = this.chat ? (this.chat.model ?? "") : this.forNewChats;
    if (this.select.selectedIndex < 0) this.select.value = ""; // a choice the server no longer offers
  }

  async changed() {
    const chat = this.chat;
    if (!chat) {
      this.forNewChats = this.select.value; // the new chat is created with it
      return;
    }
    const before = chat.model ?? "";
    try {
      const changed = await this.api.setChatModel(chat.id, this.select.value || null);
      chat.model = changed.model;
    } catch (error) {
      this.select.value = before;
      this.reportError(`Could not switch the chat's model: ${error.message}`);
    }
  }
}
