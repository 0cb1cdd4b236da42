// The page's settings, kept in this browser (localStorage: every tab, and after a reload) and applied
// the moment they change. The Settings view (settings_view.js) changes them; the rest of the page asks.

const STORAGE_KEY = "toolbridge.settings"; // early_theme.js reads the theme from it before the first paint

/** Each setting's choices; the first is the default. `agent` is free: an agent's name, "" for the first. */
export const CHOICES = {
  theme: ["system", "light", "dark"],
  sendWith: ["enter", "ctrl-enter"],
  toolCards: ["folded", "open"],
};

const IS_MAC = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
export const SEND_SHORTCUT = IS_MAC ? "⌘+Enter" : "Ctrl+Enter";

const PLACEHOLDERS = {
  enter: "Ask something… (Enter sends, Shift+Enter starts a new line, / picks a prompt)",
  "ctrl-enter": `Ask something… (${SEND_SHORTCUT} sends, Enter starts a new line, / picks a prompt)`,
};

/** The settings, each a known choice: a value stored by another version of the page falls back. */
export function readSettings() {
  let stored = {};
  try {
    stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "{}") ?? {};
  } catch {
    // unreadable: the defaults
  }
  const settings = { agent: typeof stored.agent === "string" ? stored.agent : "" };
  for (const [name, choices] of Object.entries(CHOICES)) {
    settings[name] = choices.includes(stored[name]) ? stored[name] : choices[0];
  }
  return settings;
}

export function changeSetting(name, value) {
  const settings = { ...readSettings(), [name]: value };
  localStorage.setItem(STORAGE_KEY, JSON.stringify(settings));
  applySettings(settings);
  return settings;
}

/** What shows at once: the theme, and the message box's hint for the keys that send. */
export function applySettings(settings = readSettings()) {
  if (settings.theme === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = settings.theme;
  const input = document.getElementById("composer-input");
  if (input) input.placeholder = PLACEHOLDERS[settings.sendWith];
}

/** Whether this Enter keydown (Shift not held) sends the message, or starts a new line. */
export function sendsMessage(event) {
  if (readSettings().sendWith === "enter") return true;
  return event.ctrlKey || event.metaKey;
}

/** Whether a tool call's card shows its result (and long arguments) unfolded when it comes. */
export function toolCardsOpen() {
  return readSettings().toolCards === "open";
}
