// The Settings view: the page's settings (settings.js) as a form that applies each change at once, and
// "About this server": toolbridge's version, who the page is signed in as, and forgetting the token.

import { el, replaceChildren } from "./dom.js";
import { SEND_SHORTCUT, changeSetting, readSettings } from "./settings.js";

const byId = (id) => document.getElementById(id);

export class SettingsView {
  /** `onAgentChange(name)`: the agent for new chats changed ("" for none). */
  constructor({ api, onAgentChange }) {
    this.api = api;
    this.form = byId("settings-form");
    byId("send-shortcut").textContent = SEND_SHORTCUT;
    this.form.addEventListener("change", (event) => {
      const { name, value } = event.target;
      changeSetting(name, value);
      if (name === "agent") onAgentChange(value);
    });
    byId("forget-token").addEventListener("click", () => this.forgetToken());
  }

  /** Fills the form from the stored settings, and asks the server about itself. */
  async show(agents) {
    const settings = readSettings();
    for (const name of ["theme", "sendWith", "toolCards"]) this.form.elements[name].value = settings[name];
    this.showAgents(agents, settings.agent);
    byId("forget-token").hidden = !this.api.hasToken();
    byId("forget-token-status").textContent = "";
    const health = await this.api.health();
    byId("about-version").textContent = health.version ?? "unknown";
    byId("about-caller").textContent = describeCaller(health.caller, this.api.hasToken());
  }

  showAgents(agents, chosen) {
    const select = byId("settings-agent");
    const usable = agents.filter((agent) => !agent.problem);
    const missing = chosen && !usable.some((agent) => agent.name === chosen);
    replaceChildren(
      select,
      el("option", { value: "" }, "No default: the first, then the last chat's"),
      usable.map((agent) => el("option", { value: agent.name }, agent.name)),
      // A default that is gone (or no longer reads) is shown as it is, not silently replaced.
      missing ? el("option", { value: chosen, disabled: true }, `${chosen} (not available)`) : null,
    );
    select.value = chosen;
  }

  forgetToken() {
    this.api.forgetToken();
    byId("forget-token").hidden = true;
    byId("forget-token-status").textContent = "Forgotten: the page asks for it again at its next request.";
  }
}

function describeCaller(caller, holdsToken) {
  if (!caller) return "unknown";
  if (caller.user) return `Signed in as ${caller.user}${caller.admin ? " (admin)" : ""}`;
  if (holdsToken) return "Signed in with the server's token (admin)";
  return "No sign-in: this server has no users and no token";
}
