// The chat pane: a chat's transcript, the composer, and the chat's event stream while it is open.
//
// Opening a chat renders its stored messages and follows its events (reconnecting if the stream
// drops). The server replays a run's events from its start to a stream that opens late, so after a
// reload in the middle of a reply, the stored part of that run is dropped from the view when the
// replay announces the run's prompt (`message_added`, with its index), and the replay redraws it.
// Sending to a new chat creates it first and waits for its event stream before posting.

import { ComposerContent } from "./composer_content.js";
import { INTERRUPTED, LiveRun } from "./live_run.js";
import { ModelPicker } from "./model_picker.js";
import { openingQuestionAnswered, showOpeningQuestion } from "./opening_question.js";
import { sendsMessage } from "./settings.js";
import { Transcript } from "./transcript.js";

const RECONNECT_DELAYS_MS = [500, 1000, 2000, 5000, 10000];

export class ChatView {
  constructor({ api, elements, selectedAgent, onChatCreated, onChatChanged, reportError }) {
    this.api = api;
    this.elements = elements;
    this.selectedAgent = selectedAgent;
    this.onChatCreated = onChatCreated;
    this.onChatChanged = onChatChanged;
    this.reportError = reportError;
    this.chat = null;
    this.storedMessages = [];
    this.pendingPrompt = null;
    this.promptOpening = null;
    this.liveRun = null;
    this.subscription = null;
    this.transcript = new Transcript(elements.transcript, {
      onDecision: (callId, approved, forChat) => this.api.decideApproval(this.chat.id, callId, approved, forChat),
      onServerAnswer: (requestId, answer) => this.api.answerServerRequest(this.chat.id, requestId, answer),
      onEdit: (text) => this.editMessage(text),
      onRetry: (text) => this.send(text),
    });
    this.content = new ComposerContent({
      api,
      input: elements.input,
      attachButton: elements.attachButton,
      picker: elements.resourcePicker,
      menu: elements.promptMenu,
      chips: elements.composerChips,
      reportError,
    });
    this.models = new ModelPicker({ select: elements.modelSelect, api, reportError });
    this.bindComposer();
  }

  get chatId() {
    return this.chat?.id ?? null;
  }

  showNewChat() {
    this.unsubscribe();
    this.chat = null;
    this.liveRun = null;
    this.setRunning(false);
    const agent = this.selectedAgent();
    this.elements.title.textContent = "New chat";
    this.elements.subtitle.textContent = agent ? `with ${agent.name}` : "";
    this.models.show(null, agent);
    this.transcript.showEmptyState(agent);
    this.elements.input.focus();
  }

  async openChat(chat) {
    this.unsubscribe();
    this.chat = chat;
    this.liveRun = null;
    this.setRunning(false);
    this.elements.title.textContent = chat.title || "New chat";
    this.elements.subtitle.textContent = chat.agent ? `with ${chat.agent}` : "";
    this.models.show(chat, this.selectedAgent());
    const messages = await this.api.messages(chat.id);
    if (this.chat !== chat) return; // another chat was opened meanwhile
    this.storedMessages = messages;
    this.transcript.renderStoredMessages(messages);
    if (chat.last_run?.status === "interrupted") this.transcript.addNotice(`The last answer was ${INTERRUPTED}.`, "warning");
    this.scrollToEnd();
    this.subscribe(chat.id);
  }

  /** The open chat's summary changed (a new chat takes its title from its first message). */
  updateSummary(chat) {
    if (!chat || !this.chat || String(chat.id) !== String(this.chat.id)) return;
    Object.assign(this.chat, chat); // the same object: a reconnect in progress keeps following it
    this.elements.title.textContent = chat.title || "New chat";
  }

  async send(text) {
    const prompt = this.content.prompt();
    if ((!text.trim() && !prompt) || this.running) return;
    const attachments = this.content.attachments();
    this.setRunning(true);
    try {
      if (!this.chat) await this.createChat();
      await Promise.all([this.streamOpened, this.models.saved]);
      if (!prompt) {
        this.transcript.addUserMessage(text, attachments);
        this.pendingPrompt = text;
      }
      this.elements.input.value = "";
      this.content.clear();
      this.resizeInput();
      this.scrollToEnd();
      const opening = prompt ? new PromptOpening(this.transcript) : null;
      this.promptOpening = opening;
      const sent = await this.api.sendMessage(this.chat.id, text, { attachments, prompt });
      this.onChatChanged(this.chat.id); // the message is stored: the history shows the new title
      if (opening) {
        opening.received(sent.opening);
        if (!sent.run_id) {
          this.promptOpening = null;
          this.setRunning(false); // the prompt ended with the assistant's turn: your reply is next
        }
      }
    } catch (error) {
      this.setRunning(false);
      this.pendingPrompt = null;
      this.promptOpening = null;
      const message =
        error.status === 409 ? "The agent is still answering in this chat; wait for it to finish." : error.message;
      this.transcript.addNotice(message, "error");
    }
  }

  async createChat() {
    const agent = this.selectedAgent();
    this.chat = await this.api.createChat(agent?.name ?? "default", this.models.chosen);
    this.models.show(this.chat, agent);
    this.storedMessages = [];
    this.elements.title.textContent = this.chat.title || "New chat";
    this.transcript.clear();
    this.subscribe(this.chat.id);
    this.onChatCreated(this.chat);
  }

  // -- the event stream ---------------------------------------------------------------------------

  subscribe(chatId) {
    const controller = new AbortController();
    this.subscription = controller;
    let opened;
    this.streamOpened = new Promise((resolve) => {
      opened = resolve;
    });
    const chat = this.chat;
    const follow = async () => {
      try {
        await this.api.streamChatEvents(chatId, {
          signal: controller.signal,
          onOpen: () => {
            this.setConnection("live");
            opened();
          },
          onEvent: (event) => this.handleEvent(chatId, event),
        });
      } catch (error) {
        if (controller.signal.aborted) return;
        if (error.status === 401 || error.status === 404) {
          this.reportError(`Live updates stopped: ${error.message}`);
          opened();
          return;
        }
      }
      if (controller.signal.aborted) return;
      opened(); // sending need not wait for a stream that is down
      await this.reconnect(chat);
    };
    follow();
  }

  /** After the stream dropped: reopen the chat (stored messages, then a new stream) until it works. */
  async reconnect(chat) {
    for (let attempt = 0; this.chat === chat; attempt += 1) {
      this.setConnection("reconnecting");
      await delay(RECONNECT_DELAYS_MS[Math.min(attempt, RECONNECT_DELAYS_MS.length - 1)]);
      if (this.chat !== chat) return;
      try {
        await this.openChat(chat);
        return;
      } catch {
        // the server is still away: try again later
      }
    }
  }

  unsubscribe() {
    this.subscription?.abort();
    this.subscription = null;
    this.streamOpened = Promise.resolve();
    this.setConnection("idle");
  }

  handleEvent(chatId, event) {
    if (chatId !== this.chatId) return;
    if (event.opening) return this.handleOpeningQuestion(event); // before any run: no LiveRun's
    if (!LiveRun.handles(event.type)) return;
    const following = this.isScrolledToEnd();
    // A run_started is a new run, or the replay of the current one after the stream reopened.
    if (event.type === "run_started" || !this.liveRun || (this.liveRun.finished && event.type !== "final")) {
      const run = new LiveRun(this.transcript, {
        onPrompt: (index, message) => this.showPrompt(index, message),
        onFinished: () => this.runFinished(chatId, run),
      });
      this.liveRun = run;
      this.setRunning(true);
    }
    this.liveRun.apply(event);
    if (following) requestAnimationFrame(() => this.scrollToEnd());
  }

  handleOpeningQuestion(event) {
    const { container } = this.transcript;
    if (event.type === "server_request") {
      showOpeningQuestion(container, event, (answer) => this.api.answerServerRequest(this.chat.id, event.request_id, answer));
      this.scrollToEnd();
    } else if (event.type === "server_request_answered") {
      openingQuestionAnswered(container, event);
    }
  }

  showPrompt(index, message) {
    if (this.promptOpening) {
      // A prompt sent from here: its messages before the question go in the place kept for them.
      this.promptOpening.keepPlace();
      this.promptOpening = null;
      this.transcript.addUserMessage(message.content, message.attachments);
      return;
    }
    if (this.pendingPrompt !== null) {
      this.pendingPrompt = null; // sent from here: already shown
      return;
    }
    // Someone else's prompt, or a run replayed after a reload: show the history before it, then it.
    const history = this.storedMessages.filter((stored) => stored.role !== "system").slice(0, index);
    this.transcript.renderStoredMessages(history);
    this.transcript.addUserMessage(message.content, message.attachments);
  }

  /** `run`: the LiveRun that ended, whose cards get the stored results. */
  async runFinished(chatId, run) {
    this.setRunning(false);
    this.pendingPrompt = null;
    this.onChatChanged(chatId);
    try {
      // The server stores a run's messages before it sends the final event.
      const messages = await this.api.messages(chatId);
      if (chatId !== this.chatId) return;
      this.storedMessages = messages;
      this.transcript.applyStoredResults(messages, run.calls);
    } catch (error) {
      this.reportError(`Could not load the chat's stored messages: ${error.message}`);
    }
  }

  // -- composer -----------------------------------------------------------------------------------

  bindComposer() {
    const { form, input } = this.elements;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send(input.value);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        const picked = this.content.pickFromMenu(); // Enter in the `/` menu chooses its first prompt
        if (!picked && !sendsMessage(event)) return; // Settings: Ctrl/Cmd+Enter sends, Enter a new line
        event.preventDefault();
        if (!picked) form.requestSubmit();
      }
    });
    input.addEventListener("input", () => this.resizeInput());
    this.elements.stopButton.addEventListener("click", () => this.stop());
  }

  async stop() {
    const chatId = this.chatId;
    if (chatId == null) return;
    this.elements.stopButton.disabled = true;
    try {
      await this.api.stopRun(chatId);  // the run ends with a `final` event saying it was cancelled
    } catch (error) {
      this.reportError(`Could not stop the answer: ${error.message}`);
    } finally {
      this.elements.stopButton.disabled = false;
    }
  }

  /** A message's Edit: its text back in the message box, to change and send again. */
  editMessage(text) {
    this.elements.input.value = text;
    this.resizeInput();
    this.elements.input.focus();
  }

  resizeInput() {
    const { input } = this.elements;
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, 240)}px`;
  }

  setRunning(running) {
    this.running = running;
    this.elements.sendButton.disabled = running;
    this.elements.stopButton.hidden = !running;
    this.elements.status.textContent = running ? "The agent is working…" : "";
  }

  setConnection(state) {
    this.elements.connection.dataset.state = state;
    this.elements.connection.textContent = { live: "Live", reconnecting: "Reconnecting…", idle: "" }[state];
  }

  isScrolledToEnd() {
    const { scroller } = this.elements;
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
  }

  scrollToEnd() {
    const scroller = this.elements.scroller;
    scroller.scrollTop = scroller.scrollHeight;
  }
}

/**
 * The messages a server's prompt puts before the question. They come in the answer to the POST, which
 * may arrive before or after the run's first event shows the question: a place is kept for them above
 * the question either way.
 */
class PromptOpening {
  constructor(transcript) {
    this.transcript = transcript;
    this.place = null;
    this.messages = null;
  }

  /** Keeps the place here, at the end of the transcript, unless one is kept already. */
  keepPlace() {
    if (this.place === null) {
      this.place = document.createElement("div");
      this.place.dataset.testid = "prompt-opening";
      this.transcript.container.append(this.place);
    }
    this.fill();
  }

  received(messages) {
    this.messages = messages ?? [];
    // With no run (the prompt ended with the assistant's turn), or before the run's first event.
    this.keepPlace();
  }

  fill() {
    if (this.place === null || this.messages === null) return;
    const inPlace = new Transcript(this.place, { onDecision: () => {} });
    inPlace.renderStoredMessages(this.messages);
  }
}

function delay(milliseconds) {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
