// The page's client for the toolbridge HTTP API (see docs/http-api.md).
// Every request goes through `request()`, which adds the bearer token and, on a 401, asks the user
// for it once (all requests waiting on a 401 share the one question), then retries.

import { readServerSentEvents } from "./sse.js";

const TOKEN_KEY = "toolbridge.token";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

export class Api {
  /** `askForToken(rejected)` resolves to a token, or null when the user gives up. */
  constructor({ askForToken }) {
    this.askForToken = askForToken;
    this.pendingTokenQuestion = null;
  }

  agents() {
    return this.json("GET", "/api/agents");
  }

  /** `query`: only chats whose title has it. */
  chats(query = "") {
    return this.json("GET", query ? `/api/chats?q=${encodeURIComponent(query)}` : "/api/chats");
  }

  renameChat(chatId, title) {
    return this.json("PATCH", `/api/chats/${encodeURIComponent(chatId)}`, { title });
  }

  /** The models a chat may use: {models: [{name, provider, model}], default}. */
  models() {
    return this.json("GET", "/api/models");
  }

  /** `model`: one of `models()`, or null for the chat's agent's. */
  setChatModel(chatId, model) {
    return this.json("PATCH", `/api/chats/${encodeURIComponent(chatId)}`, { model });
  }

  deleteChat(chatId) {
    return this.json("DELETE", `/api/chats/${encodeURIComponent(chatId)}`);
  }

  createChat(agent, model = null) {
    return this.json("POST", "/api/chats", { agent, model });
  }

  messages(chatId) {
    return this.json("GET", `/api/chats/${encodeURIComponent(chatId)}/messages`);
  }

  /** `extra`: {attachments: [{server, uri}], prompt: {server, name, arguments}} */
  sendMessage(chatId, content, extra = {}) {
    return this.json("POST", `/api/chats/${encodeURIComponent(chatId)}/messages`, { content, ...extra });
  }

  resources() {
    return this.json("GET", "/api/resources");
  }

  prompts() {
    return this.json("GET", "/api/prompts");
  }

  /** {server, template | prompt, argument, value, context} -> {values}: the server's suggestions. */
  complete(asked) {
    return this.json("POST", "/api/completions", asked);
  }

  stopRun(chatId) {
    return this.json("POST", `/api/chats/${encodeURIComponent(chatId)}/cancel`);
  }

  /** `forChat` (with `approved`): the chat's later calls of the same tool run without asking. */
  decideApproval(chatId, callId, approved, forChat = false) {
    const path = `/api/chats/${encodeURIComponent(chatId)}/approvals/${encodeURIComponent(callId)}`;
    return this.json("POST", path, forChat ? { approved, for_chat: true } : { approved });
  }

  answerServerRequest(chatId, requestId, answer) {
    const path = `/api/chats/${encodeURIComponent(chatId)}/server-requests/${encodeURIComponent(requestId)}`;
    return this.json("POST", path, answer);
  }

  tools() {
    return this.json("GET", "/api/tools");
  }

  servers() {
    return this.json("GET", "/api/servers");
  }

  serverLogs(name) {
    return this.json("GET", `/api/servers/${encodeURIComponent(name)}/logs`);
  }

  health() {
    return this.json("GET", "/api/health");
  }

  /** Starts an OAuth sign-in to a server: `{url, done, error}` (url: the address to open). */
  startSignIn(server) {
    return this.json("POST", `/api/servers/${encodeURIComponent(server)}/sign-in`);
  }

  /** Waits for the server's sign-in to end: `{signed_in, error}`. */
  finishSignIn(server) {
    return this.json("GET", `/api/servers/${encodeURIComponent(server)}/sign-in`);
  }

  stats(since) {
    const query = since ? `?since=${encodeURIComponent(since)}` : "";
    return this.json("GET", `/api/stats${query}`);
  }

  /** Follows a chat's agent events until the stream ends or `signal` aborts. */
  async streamChatEvents(chatId, { onOpen, onEvent, signal }) {
    const response = await this.request(`/api/chats/${encodeURIComponent(chatId)}/events`, {
      headers: { Accept: "text/event-stream" },
      signal,
    });
    onOpen?.();
    await readServerSentEvents(response, (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return; // not an agent event (e.g. a keep-alive with a plain-text payload)
      }
      onEvent({ type: message.event === "message" ? undefined : message.event, ...event });
    });
  }

  async json(method, path, body) {
    const init = { method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await this.request(path, init);
    if (response.status === 204) return null;
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  }

  async request(path, init = {}) {
    let rejected = false;
    for (;;) {
      const token = sessionStorage.getItem(TOKEN_KEY);
      const headers = { ...(init.headers ?? {}) };
      if (token) headers.Authorization = `Bearer ${token}`;
      const response = await fetch(path, { ...init, headers });
      if (response.status === 401) {
        const answer = await this.tokenFromUser(rejected || Boolean(token));
        if (!answer) throw new ApiError(401, "This server needs an access token.");
        rejected = true;
        continue;
      }
      if (!response.ok) throw new ApiError(response.status, await errorMessage(response));
      return response;
    }
  }

  /** Whether this tab holds a token (or API key) for the server. */
  hasToken() {
    return Boolean(sessionStorage.getItem(TOKEN_KEY));
  }

  /** Drops the tab's token: the next request that needs one asks for it again. */
  forgetToken() {
    sessionStorage.removeItem(TOKEN_KEY);
  }

  async tokenFromUser(rejected) {
    this.pendingTokenQuestion ??= this.askForToken(rejected).finally(() => {
      this.pendingTokenQuestion = null;
    });
    const token = await this.pendingTokenQuestion;
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    return token;
  }
}

async function errorMessage(response) {
  const text = await response.text();
  try {
    const body = JSON.parse(text);
    const detail = body.detail ?? body.error?.message ?? body.error ?? body.message;
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail)) return detail.map((item) => item.msg ?? JSON.stringify(item)).join("; ");
  } catch {
    // not JSON: the text itself is the message
  }
  return text || `${response.status} ${response.statusText}`;
}
