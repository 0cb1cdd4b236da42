// One tool call as a card: name, server, arguments, live state, duration, result, approval buttons.
//
// States (the card's data-state): running → (approval → running | declined) → done | error, or
// `cancelled` when the run was stopped while the call was running or waiting for approval.
// A call read back from history whose result never came is `not-run`.

import { el, replaceChildren } from "./dom.js";
import { formatDuration, oneLineJson, prettyJson } from "./format.js";
import { renderServerQuestion } from "./server_question.js";
import { toolCardsOpen } from "./settings.js";

const STATE_LABELS = {
  running: "Running…",
  approval: "Needs approval",
  declined: "Declined",
  cancelled: "Cancelled",
  done: "Done",
  error: "Error",
  "not-run": "Not run",
};

// Outcomes that a result arriving later (stored, or in the final event) must not overwrite.
const SETTLED_STATES = new Set(["declined", "cancelled"]);
// What a result's error_kind says about the call, where that is more than "error".
const STATE_OF_ERROR_KIND = { cancelled: "cancelled", denied: "declined" };

const ONE_LINE_ARGUMENTS_CHARS = 90;
const LONG_ARGUMENTS_LINES = 8;

export class ToolCard {
  /** `onDecision(approved, forChat)` sends the user's answer to an approval request (`forChat`: allow the
   * tool for the rest of the chat); it returns a promise. */
  constructor({ call, server = null, onDecision = null }) {
    this.call = call;
    this.onDecision = onDecision;
    this.stateBadge = el("span", { class: "tool-state", dataset: { testid: "tool-state" } });
    this.serverLabel = el("span", { class: "tool-server", dataset: { testid: "tool-server" } });
    this.durationLabel = el("span", { class: "tool-duration", dataset: { testid: "tool-duration" } });
    this.approvalBox = el("div", { class: "tool-approval", dataset: { testid: "tool-approval" }, hidden: true });
    this.progressBox = el("div", { class: "tool-progress", dataset: { testid: "tool-progress" }, hidden: true });
    this.resultBox = el("details", { class: "tool-result", dataset: { testid: "tool-result" }, hidden: true });
    this.questionBox = el("div", { class: "tool-server-questions" });
    this.element = el(
      "article",
      {
        class: "tool-card",
        dataset: { testid: "tool-card", callId: call.id, toolName: call.name },
        "aria-label": `Tool call ${call.name}`,
      },
      el(
        "header",
        { class: "tool-card-header" },
        el("span", { class: "tool-icon", "aria-hidden": "true" }, "⚙"),
        el("span", { class: "tool-name", dataset: { testid: "tool-name" } }, call.name),
        this.serverLabel,
        el("span", { class: "tool-card-spacer" }),
        this.durationLabel,
        this.stateBadge,
      ),
      renderArguments(call.arguments),
      this.progressBox,
      this.approvalBox,
      this.questionBox,
      this.resultBox,
    );
    this.setServer(server);
    this.setState("running");
  }

  setServer(server) {
    this.serverLabel.textContent = server ? `on ${server}` : "";
  }

  setState(state) {
    this.state = state;
    this.element.dataset.state = state;
    this.stateBadge.textContent = STATE_LABELS[state] ?? state;
    this.approvalBox.hidden = state !== "approval";
    if (state !== "running") this.progressBox.hidden = true;
  }

  /** Progress the server reports on the running call (a `tool_call_progress` event). */
  showProgress({ progress, total, percent, message }) {
    if (this.state !== "running") return;
    const amount = percent ?? null;
    const bar = el("progress", { max: total ? 100 : null, value: amount, "aria-label": `Progress of ${this.call.name}` });
    // A count without a total says little next to a message (a task's status has only a count).
    const label = amount !== null ? [`${amount}%`, message].filter(Boolean).join(" ") : message || String(progress);
    replaceChildren(this.progressBox, bar, el("span", { class: "tool-progress-label", dataset: { testid: "tool-progress-label" } }, label));
    this.progressBox.hidden = false;
  }

  requestApproval(reason) {
    this.setState("approval");
    const approve = el("button", { type: "button", class: "button primary", dataset: { testid: "approve-button" } }, "Approve");
    const allow = el(
      "button",
      { type: "button", class: "button", dataset: { testid: "allow-for-chat-button" }, title: `Run ${this.call.name} in this chat from now on without asking` },
      "Allow for this chat",
    );
    const deny = el("button", { type: "button", class: "button danger", dataset: { testid: "deny-button" } }, "Deny");
    const buttons = [approve, allow, deny];
    const status = el("span", { class: "tool-approval-status", role: "status" });
    const decide = async (approved, forChat = false) => {
      for (const button of buttons) button.disabled = true;
      status.textContent = forChat ? "Allowing for this chat…" : approved ? "Approving…" : "Denying…";
      try {
        await this.onDecision?.(approved, forChat);
      } catch (error) {
        status.textContent = `Could not send the answer: ${error.message}`;
        for (const button of buttons) button.disabled = false;
      }
    };
    approve.addEventListener("click", () => decide(true));
    allow.addEventListener("click", () => decide(true, true));
    deny.addEventListener("click", () => decide(false));
    replaceChildren(
      this.approvalBox,
      el("p", { class: "tool-approval-reason" }, "Run this call? ", el("span", { class: "muted" }, `(${reason})`)),
      el("div", { class: "tool-approval-actions" }, buttons, status),
    );
  }

  /** The server this call runs on asks something (see server_question.js); `answer` sends the reply. */
  askForServer(event, answer) {
    const question = renderServerQuestion(event, answer);
    question.dataset.requestId = event.request_id;
    this.questionBox.append(question);
  }

  serverRequestAnswered({ request_id, action }) {
    const question = this.questionBox.querySelector(`[data-request-id="${request_id}"]`);
    if (!question) return;
    const waiting = question.dataset.kind === "url" && action === "accept";
    replaceChildren(question, el("p", { class: "muted" }, waiting
      ? "Waiting for the server to say the step is complete…"
      : `You answered the server: ${action}.`));
  }

  serverRequestCompleted() {
    this.questionBox.append(el("p", { class: "muted", dataset: { testid: "server-question-completed" } }, "The server says the step is complete."));
  }

  approvalDecided(approved) {
    this.setState(approved ? "running" : "declined");
  }

  /** The live outcome, from a `tool_call_finished` event: only a preview of the result. */
  finish({ is_error, result_preview, duration, server, truncated_chars }) {
    if (server) this.setServer(server);
    this.settle({ is_error });
    this.durationLabel.textContent = duration ? formatDuration(duration) : "";
    const notes = truncated_chars ? [`${truncated_chars} characters were cut before the model saw this.`] : [];
    this.showResultParts([{ type: "text", text: result_preview }], { notes });
  }

  /** The stored outcome, from the messages API: the full result with every content part. */
  showResult(result) {
    if (result.server) this.setServer(result.server);
    this.settle(result);
    this.durationLabel.textContent = result.duration ? formatDuration(result.duration) : "";
    const parts = [...(result.content ?? [])];
    if (result.structured_content && !parts.some((part) => part.type === "text")) {
      parts.push({ type: "text", text: prettyJson(result.structured_content) });
    }
    this.showResultParts(parts, { notes: result.notes ?? [], cached: result.cached });
  }

  /** The state a result gives the card, unless it is already declined or cancelled. */
  settle({ is_error, error_kind }) {
    if (SETTLED_STATES.has(this.state)) return;
    this.setState(STATE_OF_ERROR_KIND[error_kind] ?? (is_error ? "error" : "done"));
  }

  /** The run was stopped: a call still going (or waiting for approval) was cancelled, not failed. */
  markCancelled() {
    if (this.state === "running" || this.state === "approval") this.setState("cancelled");
  }

  markNotRun() {
    if (this.state === "running" || this.state === "approval") this.setState("not-run");
  }

  showResultParts(parts, { notes = [], cached = false }) {
    const wasOpen = this.resultBox.open;
    const firstText = parts.find((part) => part.type === "text")?.text ?? parts[0]?.type ?? "";
    replaceChildren(
      this.resultBox,
      el(
        "summary",
        {},
        el("span", { class: "tool-result-label" }, this.state === "error" ? "Error" : "Result"),
        el("span", { class: "tool-result-summary" }, firstLine(firstText)),
        cached ? el("span", { class: "badge" }, "cached") : null,
      ),
      el(
        "div",
        { class: "tool-result-body", dataset: { testid: "tool-result-body" } },
        notes.map((note) => el("p", { class: "tool-result-note" }, note)),
        parts.map(renderContentPart),
      ),
    );
    const firstShown = this.resultBox.hidden; // after that, the card stays as the user left it
    this.resultBox.hidden = false;
    this.resultBox.open = wasOpen || this.state === "error" || (firstShown && toolCardsOpen());
  }
}

function renderArguments(args) {
  if (!args || Object.keys(args).length === 0) return null;
  const short = oneLineJson(args);
  const text = short.length <= ONE_LINE_ARGUMENTS_CHARS ? short : prettyJson(args);
  const pre = el("pre", { class: "tool-arguments", dataset: { testid: "tool-arguments" } }, text);
  if (text.split("\n").length <= LONG_ARGUMENTS_LINES) return pre;
  return el("details", { class: "tool-arguments-long", open: toolCardsOpen() }, el("summary", {}, "Arguments"), pre);
}

const SAFE_IMAGE = /^image\/[\w.+-]+$/;
const SAFE_AUDIO = /^audio\/[\w.+-]+$/;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

function renderContentPart(part) {
  switch (part.type) {
    case "text":
      return el("pre", { class: "tool-result-text" }, part.text);
    case "image":
      if (SAFE_IMAGE.test(part.mime_type) && BASE64.test(part.data)) {
        return el("img", {
          class: "tool-result-image",
          dataset: { testid: "tool-result-image" },
          src: `data:${part.mime_type};base64,${part.data}`,
          alt: `Image returned by the tool (${part.mime_type})`,
        });
      }
      return el("p", { class: "tool-result-note" }, `[image ${part.mime_type}]`);
    case "audio":
      if (SAFE_AUDIO.test(part.mime_type) && BASE64.test(part.data)) {
        return el("audio", { controls: true, src: `data:${part.mime_type};base64,${part.data}` });
      }
      return el("p", { class: "tool-result-note" }, `[audio ${part.mime_type}]`);
    case "resource":
      return el(
        "div",
        { class: "tool-result-resource" },
        el("p", { class: "tool-result-note" }, `Resource ${part.uri}${part.mime_type ? ` (${part.mime_type})` : ""}`),
        part.text !== null && part.text !== undefined ? el("pre", { class: "tool-result-text" }, part.text) : null,
      );
    default:
      return el("pre", { class: "tool-result-text" }, prettyJson(part));
  }
}

function firstLine(text) {
  const line = String(text).split("\n", 1)[0];
  return line.length > 90 ? `${line.slice(0, 89)}…` : line;
}
