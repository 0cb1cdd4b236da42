// The conversation as the user sees it: user messages, and assistant turns made of reasoning,
// answer text (Markdown) and tool cards, in the order they happened. Stored messages and live
// events both end up here. A model may reuse a call id in another turn (or step), so a result finds its
// card by call id within its own turn only: the latest card with that id (`CallCards`).

import { el, replaceChildren } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { ToolCard } from "./tool_card.js";

export class Transcript {
  /** `onDecision(callId, approved, forChat)` answers an approval request for one of the cards;
   * `onServerAnswer(requestId, {action, content})` a server's question shown in one;
   * `onEdit(text)` and `onRetry(text)` a user message's actions (none without them). */
  constructor(container, { onDecision, onServerAnswer, onEdit, onRetry }) {
    this.container = container;
    this.onDecision = onDecision;
    this.onServerAnswer = onServerAnswer;
    this.onEdit = onEdit;
    this.onRetry = onRetry;
    this.cards = new Set(); // every card shown, for what applies to all of them
    this.turnCards = new CallCards(); // the current turn's, by call id
  }

  clear() {
    this.cards.clear();
    this.turnCards = new CallCards();
    replaceChildren(this.container);
  }

  showEmptyState(agent) {
    this.clear();
    this.container.append(
      el(
        "div",
        { class: "empty-state", dataset: { testid: "empty-chat" } },
        el("h2", {}, "Start a conversation"),
        el("p", {}, agent ? `Ask ${agent.name} anything. ${agent.description ?? ""}` : "Ask anything."),
        el("p", { class: "muted" }, "Tool calls show up as cards while they run; calls that need your approval wait for it."),
      ),
    );
  }

  /** Replaces everything with a chat's stored messages (the messages API's shape). */
  renderStoredMessages(messages) {
    this.clear();
    let turn = null;
    for (const message of messages) {
      if (message.role === "user") {
        this.addUserMessage(message.content, message.attachments);
        turn = null;
      } else if (message.role === "assistant") {
        turn ??= this.startAssistantTurn();
        if (message.model) turn.setModel(message.model);
        if (message.reasoning) turn.appendReasoning(message.reasoning);
        if (message.content) turn.appendText(message.content);
        for (const call of message.tool_calls ?? []) turn.addToolCard(this.createCard(call, null, this.turnCards));
      } else if (message.role === "tool") {
        turn ??= this.startAssistantTurn();
        this.showStoredResult(message);
      }
    }
    for (const card of this.cards.values()) card.markNotRun();
  }

  /** Gives the cards a run drew from live events (`runCards`) the full stored results (images and
   * all): those of the messages after the last user message, matched in the order the calls came. */
  applyStoredResults(messages, runCards) {
    const lastPrompt = messages.findLastIndex((message) => message.role === "user");
    const seen = new Map(); // call id -> how many calls with that id so far
    for (const message of messages.slice(lastPrompt + 1)) {
      for (const call of message.tool_calls ?? []) seen.set(call.id, (seen.get(call.id) ?? 0) + 1);
      if (message.role === "tool" && message.result) {
        const nth = (seen.get(message.result.call_id) ?? 1) - 1;
        runCards.nth(message.result.call_id, nth)?.showResult(message.result);
      }
    }
  }

  showStoredResult(message) {
    const card = this.turnCards.latest(message.result?.call_id);
    if (card) {
      if (wasDeclined(message.result)) card.setState("declined");
      else if (wasCancelled(message.result)) card.setState("cancelled");
      card.showResult(message.result);
    }
  }

  /** `attachments`: stored parts ({uri, ...}) or resources being sent ({server, uri}). */
  addUserMessage(text, attachments = []) {
    this.container.querySelector(".empty-state")?.remove();
    this.turnCards = new CallCards(); // a new turn: its calls' ids may repeat the last turn's
    const bubble = el(
      "div",
      { class: "message user", dataset: { testid: "user-message" } },
      el("div", { class: "message-author" }, "You"),
      el(
        "div",
        { class: "message-body" },
        text && el("p", { class: "plain-text", dataset: { testid: "user-text" } }, text),
        (attachments ?? []).map((part) =>
          el("p", { class: "attachment muted", dataset: { testid: "user-attachment" } }, `📎 ${part.uri ?? part.type}`),
        ),
      ),
      text && this.onEdit && messageActions([
        ["Edit", "edit-message", () => this.onEdit(text)],
        ["Retry", "retry-message", () => this.onRetry(text)],
      ]),
    );
    this.container.append(bubble);
    return bubble;
  }

  startAssistantTurn() {
    const turn = new AssistantTurn({ copyable: Boolean(this.onEdit) });
    this.container.append(turn.element);
    return turn;
  }

  /** A new card for `call`, kept in `turnCards` (the turn's or a live run's) as its id's latest. */
  createCard(call, server, turnCards) {
    const card = new ToolCard({ call, server, onDecision: (approved, forChat) => this.onDecision(call.id, approved, forChat) });
    this.cards.add(card);
    turnCards.add(call.id, card);
    return card;
  }

  /** A server's question, shown in `card` (that of the call waiting on it). */
  askForServer(card, event) {
    card?.askForServer(event, (answer) => this.onServerAnswer(event.request_id, answer));
  }

  addNotice(text, kind = "info") {
    const notice = el("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status", dataset: { testid: "run-notice" } }, text);
    this.container.append(notice);
    return notice;
  }
}

/** A row of small buttons under a message: [label, testid, onClick(button)]. */
function messageActions(actions) {
  return el(
    "div",
    { class: "message-actions" },
    actions.map(([label, testid, onClick]) => {
      const button = el("button", { type: "button", class: "message-action", dataset: { testid } }, label);
      button.addEventListener("click", () => onClick(button));
      return button;
    }),
  );
}

/** One turn's (or one live run's) tool cards by call id, in the order they were drawn. */
export class CallCards {
  constructor() {
    this.byId = new Map();
  }

  add(callId, card) {
    const cards = this.byId.get(callId) ?? [];
    cards.push(card);
    this.byId.set(callId, cards);
  }

  /** The latest card of call `callId` (a later step may reuse an id: its events are the latest). */
  latest(callId) {
    return this.byId.get(callId)?.at(-1) ?? null;
  }

  nth(callId, index) {
    return this.byId.get(callId)?.[index] ?? null;
  }
}

/** One answer from the agent, possibly over several model steps with tool calls in between. */
export class AssistantTurn {
  constructor({ copyable = false } = {}) {
    this.body = el("div", { class: "message-body" });
    this.modelLabel = el("span", { class: "answer-model muted", dataset: { testid: "answer-model" }, hidden: true });
    this.element = el(
      "div",
      { class: "message assistant", dataset: { testid: "assistant-message" } },
      el("div", { class: "message-author" }, "Assistant", this.modelLabel),
      this.body,
      copyable && messageActions([["Copy", "copy-answer", (button) => this.copy(button)]]),
    );
    this.lastSegment = null;
  }

  /** Copies the turn's answer text (its Markdown source, as the model wrote it). */
  async copy(button) {
    const text = [...this.body.querySelectorAll(".answer-text")].map((segment) => segment.dataset.source ?? segment.textContent).join("\n\n");
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => (button.textContent = "Copy"), 1500);
  }

  /** Which model wrote the answer (the last, when several did). */
  setModel(name) {
    this.modelLabel.textContent = ` · ${name}`;
    this.modelLabel.hidden = false;
  }

  appendText(text) {
    if (!(this.lastSegment instanceof MarkdownSegment)) {
      this.lastSegment = new MarkdownSegment();
      this.body.append(this.lastSegment.element);
    }
    this.lastSegment.append(text);
  }

  appendReasoning(text) {
    if (!(this.lastSegment instanceof ReasoningSegment)) {
      this.lastSegment = new ReasoningSegment();
      this.body.append(this.lastSegment.element);
    }
    this.lastSegment.append(text);
  }

  addToolCard(card) {
    this.body.append(card.element);
    this.lastSegment = card;
  }

  addNote(text, kind = "info") {
    this.body.append(el("p", { class: `turn-note ${kind}`, dataset: { testid: "turn-note" } }, text));
    this.lastSegment = null;
  }

  get hasText() {
    return Boolean(this.body.querySelector(".answer-text"));
  }

  setWorking(working) {
    this.element.classList.toggle("working", working);
    this.element.setAttribute("aria-busy", String(working));
  }
}

/** Answer text, re-rendered as Markdown at most once per frame while it streams in. */
class MarkdownSegment {
  constructor() {
    this.text = "";
    this.element = el("div", { class: "answer-text markdown", dataset: { testid: "assistant-text" } });
    this.renderPending = false;
  }

  append(text) {
    this.text += text;
    this.element.dataset.source = this.text;
    if (this.renderPending) return;
    this.renderPending = true;
    requestAnimationFrame(() => {
      this.renderPending = false;
      replaceChildren(this.element, renderMarkdown(this.text));
    });
  }
}

class ReasoningSegment {
  constructor() {
    this.text = el("div", { class: "reasoning-text" });
    this.element = el(
      "details",
      { class: "reasoning", dataset: { testid: "reasoning" } },
      el("summary", {}, "Reasoning"),
      this.text,
    );
  }

  append(text) {
    this.text.textContent += text;
  }
}

// The loop reports a declined call as an error result that never ran (so it took no time).
const DECLINED = /^(The user declined this call|This call to .* needs the user's approval)/;

function wasDeclined(result) {
  const text = result.content?.[0]?.text ?? "";
  return result.is_error && !result.duration && DECLINED.test(text);
}

// A run stopped while a call ran gives the call this result (the loop's `Stop("cancelled")`); newer
// results also say so in `error_kind`.
const CANCELLED = /^This call did not run: The run was cancelled/;

function wasCancelled(result) {
  const text = result.content?.[0]?.text ?? "";
  return result.error_kind === "cancelled" || (result.is_error && CANCELLED.test(text));
}
