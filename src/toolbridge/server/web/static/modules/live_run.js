// Turns one run's events (src/toolbridge/agent/events.py, plus the server's run_started, run_error
// and run_interrupted) into changes to the transcript: the prompt, streamed text and reasoning, tool cards
// moving through their states, notes, and the end of the run. Its events find their cards among the
// run's own (`this.calls`): a model may reuse a call id of an earlier turn.

import { CallCards } from "./transcript.js";

/** What the page says of a run whose server stopped before it ended (also when the chat opens later). */
export const INTERRUPTED = "interrupted: the server running it stopped; its completed steps are kept";

export class LiveRun {
  /**
   * `onPrompt(index, message)`: the run's user message, at `index` in the chat's stored messages.
   * `onFinished(result)`: called once, with the run's result (null when the run failed).
   */
  constructor(transcript, { onPrompt, onFinished }) {
    this.transcript = transcript;
    this.onPrompt = onPrompt;
    this.onFinished = onFinished;
    this.turn = null;
    this.model = null;
    this.finished = false;
    this.calls = new CallCards();
  }

  cardFor(callId) {
    return this.calls.latest(callId);
  }

  static handles(type) {
    return Object.hasOwn(HANDLERS, type);
  }

  /** The assistant's turn, started at the first thing the agent does (after the prompt is shown). */
  get currentTurn() {
    if (!this.turn) {
      this.turn = this.transcript.startAssistantTurn();
      this.turn.setWorking(!this.finished);
      if (this.model) this.turn.setModel(this.model);
    }
    return this.turn;
  }

  apply(event) {
    HANDLERS[event.type](this, event);
  }

  finish(result) {
    if (this.finished) return;
    this.finished = true;
    const turn = this.currentTurn;
    turn.setWorking(false);
    if (result?.stop_reason === "cancelled") {
      for (const card of this.transcript.cards) card.markCancelled();
    }
    if (result) {
      if (result.output && !turn.hasText) turn.appendText(result.output);
      if (result.stop_reason && result.stop_reason !== "final_answer") {
        turn.addNote(result.stop_detail || `The run stopped (${result.stop_reason}).`, "warning");
      }
      const seen = new Map(); // a call id the model reused goes to its cards in order
      for (const record of result.tool_calls ?? []) {
        const id = record.call?.id;
        seen.set(id, (seen.get(id) ?? 0) + 1);
        this.calls.nth(id, seen.get(id) - 1)?.showResult(record.result);
      }
    }
    for (const card of this.transcript.cards) card.markNotRun();
    this.onFinished(result);
  }
}

const HANDLERS = {
  run_started: (run, event) => {
    run.model = event.model ?? null; // the answer says which model wrote it
  },
  message_added: (run, event) => {
    if (event.message?.role === "user") run.onPrompt(event.index, event.message);
  },
  step_started: (run) => run.currentTurn,
  step_finished: () => {},
  text_delta: (run, event) => run.currentTurn.appendText(event.text),
  reasoning_delta: (run, event) => run.currentTurn.appendReasoning(event.text),
  tool_mode_changed: (run, event) =>
    run.currentTurn.addNote(`The model does not take tools natively; they are now described in the prompt. (${event.reason})`),
  invalid_tool_call: (run, event) =>
    run.currentTurn.addNote(`The model wrote a tool call that could not be read: ${event.message}`, "warning"),
  // Each start is a new card, also for a call id the model used before; its later events go to it.
  tool_call_started: (run, event) =>
    run.currentTurn.addToolCard(run.transcript.createCard(event.call, event.server, run.calls)),
  approval_requested: (run, event) => {
    if (!run.cardFor(event.call.id)) HANDLERS.tool_call_started(run, { call: event.call, server: null });
    run.cardFor(event.call.id).requestApproval(event.reason);
  },
  approval_decided: (run, event) => run.cardFor(event.call_id)?.approvalDecided(event.approved),
  tool_call_progress: (run, event) => run.cardFor(event.call_id)?.showProgress(event),
  server_request: (run, event) => run.transcript.askForServer(run.cardFor(event.call_id), event),
  server_request_answered: (run, event) => run.cardFor(event.call_id)?.serverRequestAnswered(event),
  server_request_completed: (run, event) => run.cardFor(event.call_id)?.serverRequestCompleted(event),
  tool_call_finished: (run, event) => run.cardFor(event.call_id)?.finish(event),
  final: (run, event) => run.finish(event.result),
  run_interrupted: (run, event) => {
    run.currentTurn.addNote(event.message || INTERRUPTED, "warning");
    run.finish(null);
  },
  run_error: (run, event) => {
    run.currentTurn.addNote(`The run failed: ${event.message || "unknown error"}`, "error");
    run.finish(null);
  },
};
