// The sidebar's chat history: newest first, the open chat marked, a click opens a chat; a search box
// narrows it by title, and each chat can be renamed or deleted.

import { el, replaceChildren } from "./dom.js";
import { formatRelativeTime } from "./format.js";

export class ChatList {
  /** `onRename(chat)` and `onDelete(chat)` ask the user and act; `search` is the search box. */
  constructor(container, { onSelect, onRename, onDelete, search }) {
    this.container = container;
    this.onSelect = onSelect;
    this.onRename = onRename;
    this.onDelete = onDelete;
    this.search = search;
    this.chats = [];
    this.activeId = null;
  }

  async refresh(api) {
    const query = this.search?.value.trim() ?? "";
    const chats = await api.chats(query);
    if ((this.search?.value.trim() ?? "") !== query) return; // typed on meanwhile: a newer refresh follows
    this.chats = chats;
    this.render(query);
  }

  find(id) {
    return this.chats.find((chat) => String(chat.id) === String(id)) ?? null;
  }

  setActive(id) {
    this.activeId = id === null ? null : String(id);
    for (const button of this.container.querySelectorAll("[data-chat-id]")) {
      if (button.dataset.chatId === this.activeId) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
    }
  }

  render(query = "") {
    if (this.chats.length === 0) {
      const empty = query ? `No chat title has "${query}".` : "No chats yet.";
      replaceChildren(this.container, el("li", { class: "chat-list-empty muted" }, empty));
      return;
    }
    replaceChildren(this.container, this.chats.map((chat) => this.renderItem(chat)));
    this.setActive(this.activeId);
  }

  renderItem(chat) {
    const meta = [chat.agent, messageCount(chat.message_count), formatRelativeTime(chat.updated_at)].filter(Boolean);
    return el(
      "li",
      { class: "chat-list-item" },
      el(
        "button",
        {
          type: "button",
          class: "chat-item",
          dataset: { testid: "chat-item", chatId: String(chat.id) },
          onclick: () => this.onSelect(chat),
        },
        el("span", { class: "chat-item-title" }, chat.title || "Untitled chat"),
        el("span", { class: "chat-item-meta" }, meta.join(" · ")),
      ),
      el(
        "span",
        { class: "chat-item-actions" },
        el("button", { type: "button", class: "icon-button", title: "Rename", "aria-label": `Rename ${chat.title || "chat"}`, dataset: { testid: "chat-rename" }, onclick: () => this.onRename(chat) }, "✎"),
        el("button", { type: "button", class: "icon-button", title: "Delete", "aria-label": `Delete ${chat.title || "chat"}`, dataset: { testid: "chat-delete" }, onclick: () => this.onDelete(chat) }, "✕"),
      ),
    );
  }
}

function messageCount(count) {
  if (count === undefined || count === null) return "";
  return count === 1 ? "1 message" : `${count} messages`;
}
