// The servers panel: each MCP server's connection state, its last error, and the tools it offers
// (native tools, implemented inside toolbridge, are listed as a server of their own).

import { el, replaceChildren } from "./dom.js";

const NATIVE = "native";

/** Draws the panel; resolves to the servers' statuses (the API's list). */
export async function renderServersPanel(container, api) {
  // One after the other: listing the servers connects them, and only then do they list their tools.
  const servers = await api.servers();
  const tools = await api.tools();
  const health = await api.health();
  const toolsBySource = groupBy(tools, (tool) => tool.source ?? NATIVE);
  const redraw = () => renderServersPanel(container, api);
  const cards = servers.map((server) =>
    serverCard(server, toolsBySource.get(server.name) ?? [], (card) => signIn(server, api, card, redraw), api),
  );
  const nativeTools = toolsBySource.get(NATIVE) ?? [];
  if (nativeTools.length && !servers.some((server) => server.name === NATIVE)) {
    cards.push(
      serverCard({ name: NATIVE, transport: "built in", state: "ready", tool_count: nativeTools.length }, nativeTools),
    );
  }
  replaceChildren(
    container,
    storeCard(health.store),
    cards.length ? cards : el("p", { class: "muted" }, "No MCP servers are configured, and there are no native tools."),
  );
  return servers;
}

// Shown only when writes fail: answers still arrive, but chats and the call log are not being kept.
function storeCard(store) {
  if (!store || store.state !== "degraded") return null;
  return el(
    "section",
    { class: "panel-card server-card", dataset: { testid: "store-degraded" }, "aria-label": "Database" },
    el(
      "header",
      { class: "panel-card-header" },
      el("h3", {}, "Database"),
      el("span", { class: "tool-card-spacer" }),
      el("span", { class: "state-badge state-error" }, "degraded"),
    ),
    el("p", { class: "error-text" }, `Not recording chats or tool calls: ${store.error}`),
  );
}

function serverCard(server, tools, onSignIn = null, api = null) {
  const count = server.tool_count ?? tools.length;
  const card = el(
    "section",
    { class: "panel-card server-card", dataset: { testid: "server-card", server: server.name }, "aria-label": `Server ${server.name}` },
    el(
      "header",
      { class: "panel-card-header" },
      el("h3", {}, server.name),
      el("span", { class: "muted" }, server.transport ?? ""),
      // The MCP revision the session speaks (2026-07-28 or the 2025-11-25 handshake); none until connected.
      server.protocol ? el("span", { class: "muted", dataset: { testid: "server-protocol" } }, `MCP ${server.protocol}`) : null,
      el("span", { class: "tool-card-spacer" }),
      el("span", { class: `state-badge state-${stateClass(server.state)}`, dataset: { testid: "server-state" } }, server.state ?? "unknown"),
    ),
    server.last_error ? el("p", { class: "error-text", dataset: { testid: "server-error" } }, server.last_error) : null,
    server.needs_sign_in
      ? el(
          "p",
          { class: "sign-in" },
          el("button", { type: "button", class: "button", onclick: () => onSignIn(card) }, "Sign in"),
          el("span", { class: "muted", dataset: { testid: "sign-in-status" } }),
        )
      : null,
    el(
      "details",
      { class: "server-tools" },
      el("summary", {}, count === 1 ? "1 tool" : `${count} tools`),
      el("ul", { class: "tool-list" }, tools.map(toolItem)),
    ),
    api && server.enabled !== false ? logsSection(server.name, api) : null,
  );
  return card;
}

// What the server logged to toolbridge (MCP notifications/message), read each time it is opened.
function logsSection(name, api) {
  const list = el("ol", { class: "server-log", dataset: { testid: "server-log" } });
  const section = el("details", { class: "server-logs" }, el("summary", {}, "Log messages"), list);
  section.addEventListener("toggle", async () => {
    if (!section.open) return;
    replaceChildren(list, el("li", { class: "muted" }, "Loading…"));
    try {
      const entries = await api.serverLogs(name);
      replaceChildren(
        list,
        entries.length ? entries.map(logItem) : el("li", { class: "muted" }, "Nothing logged yet."),
      );
    } catch (error) {
      replaceChildren(list, el("li", { class: "error-text" }, `Could not read the log: ${error.message}`));
    }
  });
  return section;
}

function logItem(entry) {
  const time = new Date(entry.time * 1000).toLocaleTimeString();
  return el(
    "li",
    { class: `log-${entry.level}`, dataset: { testid: "server-log-entry", level: entry.level } },
    el("span", { class: "muted" }, time),
    " ",
    el("span", { class: "badge" }, entry.level),
    entry.logger ? el("span", { class: "muted" }, ` ${entry.logger}:`) : null,
    " ",
    entry.text,
  );
}

// OAuth: the authorization server's page opens in a new tab, and the server's callback on 127.0.0.1
// receives the result. The tab is opened during the click, where no popup blocker stops it.
async function signIn(server, api, card, redraw) {
  const button = card.querySelector(".sign-in button");
  const status = card.querySelector('[data-testid="sign-in-status"]');
  button.disabled = true;
  const tab = window.open("", "_blank");
  status.textContent = " Signing in…";
  try {
    const started = await api.startSignIn(server.name);
    if (started.url && tab) {
      tab.location.href = started.url;
      status.textContent = " Finish signing in in the new tab.";
    } else if (started.url) {
      replaceChildren(status, " ", el("a", { href: started.url, target: "_blank", rel: "noopener" }, "Open the sign-in page"));
    } else {
      tab?.close();
    }
    const finished = started.done ? { signed_in: !started.error, error: started.error } : await api.finishSignIn(server.name);
    if (!finished.signed_in) throw new Error(finished.error ?? "the sign-in did not complete");
    await redraw();
  } catch (error) {
    status.textContent = ` Sign-in failed: ${error.message}`;
    button.disabled = false;
  }
}

function toolItem(tool) {
  const hints = [];
  if (tool.annotations?.read_only_hint) hints.push("read-only");
  if (tool.annotations?.destructive_hint) hints.push("destructive");
  if (tool.annotations?.idempotent_hint) hints.push("idempotent");
  return el(
    "li",
    { dataset: { testid: "server-tool", tool: tool.name } },
    el("code", {}, tool.name),
    hints.map((hint) => el("span", { class: `badge hint-${hint}` }, hint)),
    tool.description ? el("p", { class: "muted" }, tool.description.split("\n")[0]) : null,
  );
}

// Connection states from toolbridge.mcp (disabled, disconnected, connecting, connected, failed, closed).
function stateClass(state) {
  if (state === "connected" || state === "ready") return "ok";
  if (state === "failed") return "error";
  if (state === "connecting") return "pending";
  return "idle";
}

function groupBy(items, key) {
  const groups = new Map();
  for (const item of items) {
    const name = key(item);
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(item);
  }
  return groups;
}
