// Small formatting helpers shared by the views.

export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return "";
  if (seconds < 1) return `${Math.max(1, Math.round(seconds * 1000))} ms`;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

export function formatPercent(fraction) {
  if (fraction === null || fraction === undefined) return "–";
  return `${Math.round(fraction * 1000) / 10}%`;
}

const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const UNITS = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
];

export function formatRelativeTime(isoTime, now = Date.now()) {
  const time = Date.parse(isoTime);
  if (Number.isNaN(time)) return "";
  const seconds = (time - now) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return RELATIVE.format(Math.round(seconds / size), unit);
  }
  return "just now";
}

export function prettyJson(value) {
  return JSON.stringify(value, null, 2);
}

/** `{"key": value, …}` on one line, with the spaces `JSON.stringify` leaves out. */
export function oneLineJson(object) {
  const entries = Object.entries(object).map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  return `{${entries.join(", ")}}`;
}
