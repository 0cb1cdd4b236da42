// The sidebar's chat history: newest first, the open chat marked, a click opens a chat.

import { el, replaceChildren } from "./dom.js";
import { formatRelativeTime } from "./format.js";

export class ChatList {
  constructor(container, { onSelect }) {
    this.container = container;
    this.onSelect = onSelect;
    this.chats = [];
    this.activeId = null;
  }

  async refresh(api) {
    this.chats = await api.chats();
    this.render();
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

  render() {
    if (this.chats.length === 0) {
      replaceChildren(this.container, el("li", { class: "chat-list-empty muted" }, "No chats yet."));
      return;
    }
    replaceChildren(this.container, this.chats.map((chat) => this.renderItem(chat)));
    this.setActive(this.activeId);
  }

  renderItem(chat) {
    const meta = [chat.agent, messageCount(chat.message_count), formatRelativeTime(chat.updated_at)].filter(Boolean);
    return el(
      "li",
      {},
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
    );
  }
}

function messageCount(count) {
  if (count === undefined || count === null) return "";
  return count === 1 ? "1 message" : `${count} messages`;
}
