// A server's question asked while a message's opening is read (a prompt got, a resource attached:
// before the run starts, so no tool card waits on it). The same form as in a tool card
// (server_question.js), standing alone at the end of the chat; the message goes on once it is
// answered, and is refused (the composer says why) when it is declined.

import { el, replaceChildren } from "./dom.js";
import { renderServerQuestion } from "./server_question.js";

/** Shows the question of a `server_request` event with `opening: true`; `answer` sends the reply. */
export function showOpeningQuestion(container, event, answer) {
  container.querySelector(".empty-state")?.remove();
  const question = renderServerQuestion(event, answer);
  container.append(el("div", {
    class: "opening-question",
    dataset: { testid: "opening-question", requestId: event.request_id },
  }, el("p", { class: "muted" }, "Before your message is sent:"), question));
}

/** Its `server_request_answered` event: the form makes way for what was answered. */
export function openingQuestionAnswered(container, { request_id, action }) {
  const card = [...container.querySelectorAll(".opening-question")].find((c) => c.dataset.requestId === request_id);
  if (card) replaceChildren(card, el("p", { class: "muted" }, `You answered the server: ${action}.`));
}
