// Run before the page is drawn (a classic script in <head>): the theme chosen in Settings, so a page
// set to dark does not flash light while the modules load. settings.js owns the setting and its key.
try {
  const theme = JSON.parse(localStorage.getItem("toolbridge.settings") ?? "{}")?.theme;
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
} catch {
  // unreadable settings: the system's theme, as settings.js falls back to
}
