// The page's entry point: wires the views together and routes by the URL's hash
// (#/ a new chat, #/chats/ID a stored chat, #/servers, #/stats, #/settings), so a reload lands where the
// user was.

import { Api } from "./modules/api.js";
import { ChatList } from "./modules/chat_list.js";
import { ChatView } from "./modules/chat_view.js";
import { el, replaceChildren } from "./modules/dom.js";
import { ServerBanner } from "./modules/server_banner.js";
import { renderServersPanel } from "./modules/servers_panel.js";
import { applySettings, readSettings } from "./modules/settings.js";
import { SettingsView } from "./modules/settings_view.js";
import { renderStatsPanel } from "./modules/stats_panel.js";
import { askForToken } from "./modules/token_dialog.js";

const byId = (id) => document.getElementById(id);

applySettings(); // the theme and the message box's hint, before anything is drawn
window.addEventListener("storage", () => applySettings()); // changed in another tab

const api = new Api({ askForToken });
const serverBanner = new ServerBanner(byId("server-banner"));
let agents = [];

const chatList = new ChatList(byId("chat-list"), {
  onSelect: (chat) => navigate(`#/chats/${chat.id}`),
  onRename: (chat) => renameChat(chat),
  onDelete: (chat) => deleteChat(chat),
  search: byId("chat-search"),
});
byId("chat-search").addEventListener("input", () => refreshChatList());

async function renameChat(chat) {
  const title = window.prompt("New title for this chat (empty: its first message)", chat.title ?? "");
  if (title === null) return;
  try {
    await api.renameChat(chat.id, title.trim() || null);
    await refreshChatList();
  } catch (error) {
    reportError(`Could not rename the chat: ${error.message}`);
  }
}

async function deleteChat(chat) {
  if (!window.confirm(`Delete "${chat.title || "this chat"}" and its messages?`)) return;
  try {
    await api.deleteChat(chat.id);
    if (String(chatView.chatId) === String(chat.id)) navigate("#/");
    await refreshChatList();
  } catch (error) {
    reportError(`Could not delete the chat: ${error.message}`);
  }
}

const chatView = new ChatView({
  api,
  elements: {
    title: byId("chat-title"),
    subtitle: byId("chat-subtitle"),
    modelSelect: byId("model-select"),
    connection: byId("connection"),
    scroller: byId("transcript-scroller"),
    transcript: byId("transcript"),
    form: byId("composer"),
    input: byId("composer-input"),
    sendButton: byId("send-button"),
    stopButton: byId("stop-button"),
    status: byId("composer-status"),
    attachButton: byId("attach-button"),
    resourcePicker: byId("resource-picker"),
    promptMenu: byId("prompt-menu"),
    composerChips: byId("composer-chips"),
  },
  selectedAgent: () => agents.find((agent) => agent.name === byId("agent-select").value) ?? null,
  onChatCreated: (chat) => navigate(`#/chats/${chat.id}`),
  onChatChanged: () => refreshChatList(),
  reportError,
});

// -- routing --------------------------------------------------------------------------------------

const VIEWS = {
  chat: byId("chat-view"),
  servers: byId("servers-view"),
  stats: byId("stats-view"),
  settings: byId("settings-view"),
};

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

// On a phone the history and the agent picker are a drawer over the conversation.
function setDrawerOpen(open) {
  document.querySelector(".app").classList.toggle("drawer-open", open);
  byId("drawer-toggle").setAttribute("aria-expanded", String(open));
  byId("drawer-backdrop").hidden = !open;
}
byId("drawer-toggle").addEventListener("click", () =>
  setDrawerOpen(!document.querySelector(".app").classList.contains("drawer-open")),
);
byId("drawer-backdrop").addEventListener("click", () => setDrawerOpen(false));

async function route() {
  setDrawerOpen(false); // a chat was picked, or another view: the drawer has done its job
  const [section, id] = location.hash.replace(/^#\/?/, "").split("/");
  try {
    if (section === "servers") {
      showView("servers");
      await refreshServers();
    } else if (section === "stats") {
      showView("stats");
      await refreshStats();
    } else if (section === "settings") {
      showView("settings");
      await settingsView.show(agents);
    } else if (section === "chats" && id) {
      showView("chat");
      rememberChatLink();
      await openChat(id);
    } else {
      showView("chat");
      rememberChatLink();
      chatList.setActive(null);
      if (chatView.chatId !== null) selectDefaultAgent(); // not the last chat's agent
      chatView.showNewChat();
    }
  } catch (error) {
    reportError(error.message);
  }
}

function showView(name) {
  for (const [viewName, view] of Object.entries(VIEWS)) view.hidden = viewName !== name;
  document.body.dataset.view = name; // narrow windows show the chat history only with the chat
  for (const link of document.querySelectorAll("[data-view-link]")) {
    if (link.dataset.viewLink === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

/** The Chat tab leads back to the chat last shown, not to a new one. */
function rememberChatLink() {
  document.querySelector('[data-view-link="chat"]').setAttribute("href", location.hash || "#/");
}

async function openChat(id) {
  chatList.setActive(id);
  if (String(chatView.chatId) === String(id)) return; // already open (e.g. just created)
  let chat = chatList.find(id);
  if (!chat) {
    await chatList.refresh(api);
    chat = chatList.find(id);
  }
  if (!chat) {
    reportError(`There is no chat ${id}.`);
    navigate("#/");
    return;
  }
  selectAgent(chat.agent);
  await chatView.openChat(chat);
}

// -- sidebar --------------------------------------------------------------------------------------

async function loadAgents() {
  agents = await api.agents();
  const select = byId("agent-select");
  replaceChildren(
    select,
    agents.map((agent) =>
      // A stored agent that no longer reads is listed, so it is not silently gone, but cannot be picked.
      agent.problem
        ? el("option", { value: agent.name, disabled: true, title: agent.problem }, `${agent.name} (invalid)`)
        : el("option", { value: agent.name }, agent.model ? `${agent.name} (${agent.model})` : agent.name),
    ),
  );
  select.addEventListener("change", () => {
    describeSelectedAgent();
    if (chatView.chatId === null) chatView.showNewChat();
  });
  selectDefaultAgent();
  describeSelectedAgent();
}

/** The agent new chats start with (Settings), when one is set and usable. */
function selectDefaultAgent() {
  const name = readSettings().agent;
  if (agents.some((agent) => agent.name === name && !agent.problem)) selectAgent(name);
}

function selectAgent(name) {
  if (name && agents.some((agent) => agent.name === name)) {
    byId("agent-select").value = name;
    describeSelectedAgent();
  }
}

function describeSelectedAgent() {
  const agent = agents.find((candidate) => candidate.name === byId("agent-select").value);
  byId("agent-description").textContent = agent?.description ?? "";
}

async function refreshChatList() {
  try {
    await chatList.refresh(api);
    chatView.updateSummary(chatList.find(chatView.chatId));
  } catch (error) {
    reportError(`Could not load the chat history: ${error.message}`);
  }
}

// -- panels ---------------------------------------------------------------------------------------

async function refreshServers() {
  serverBanner.update(await renderServersPanel(byId("servers-panel"), api));
}

/** Connects every server (as a chat would) so that one that fails to start is named at once. */
async function checkServers() {
  try {
    serverBanner.update(await api.servers());
  } catch (error) {
    reportError(`Could not check the MCP servers: ${error.message}`);
  }
}

async function refreshStats() {
  await renderStatsPanel(byId("stats-panel"), api, byId("stats-since").value);
}

const settingsView = new SettingsView({
  api,
  // Chosen as the default: a new chat not yet started takes it now.
  onAgentChange: () => {
    if (chatView.chatId === null) selectDefaultAgent();
  },
});

// -- errors ---------------------------------------------------------------------------------------

function reportError(message) {
  byId("error-text").textContent = message;
  byId("error-banner").hidden = false;
}

// -- start ----------------------------------------------------------------------------------------

byId("new-chat").addEventListener("click", () => navigate("#/"));
byId("error-dismiss").addEventListener("click", () => {
  byId("error-banner").hidden = true;
});
byId("servers-refresh").addEventListener("click", () => refreshServers().catch((error) => reportError(error.message)));
byId("stats-refresh").addEventListener("click", () => refreshStats().catch((error) => reportError(error.message)));
byId("stats-since").addEventListener("change", () => refreshStats().catch((error) => reportError(error.message)));
window.addEventListener("hashchange", route);

try {
  await Promise.all([loadAgents(), chatList.refresh(api), chatView.models.load()]);
} catch (error) {
  reportError(`Could not reach the toolbridge server: ${error.message}`);
}
await route();
checkServers(); // not awaited: a slow server must not hold up the page
