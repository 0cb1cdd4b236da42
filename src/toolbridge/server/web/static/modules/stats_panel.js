// The statistics view: per tool and server, calls (and how many were declined or cancelled), success
// rate, latency percentiles, cache hits and when it was last called; under each tool's row, its
// latency histogram, its calls over time and its last error (long ones folded), over a chosen period.

import { callsOverTime, latencyHistogram } from "./charts.js";
import { el, replaceChildren } from "./dom.js";
import { foldedText } from "./folded_text.js";
import { formatDuration, formatPercent, formatRelativeTime } from "./format.js";

const COLUMNS = [
  { title: "Tool", cell: (row) => el("code", { class: "stats-tool", title: row.tool }, breakableName(row.tool)) },
  { title: "Server", cell: (row) => el("span", { class: "stats-server", title: row.server }, row.server ?? "") },
  { title: "Calls", numeric: true, cell: callsCell },
  { title: "Success", numeric: true, cell: (row) => formatPercent(row.success_rate) },
  { title: "p50", numeric: true, cell: (row) => formatDuration(row.p50) },
  { title: "p95", numeric: true, cell: (row) => formatDuration(row.p95) },
  { title: "Cache hits", numeric: true, cell: (row) => String(row.cache_hits ?? 0) },
  { title: "Last call", cell: (row) => formatRelativeTime(row.last_called) },
];

const latestRequest = new WeakMap(); // container -> its latest request: an older answer must not win

/** Draws the figures for `since`; the container's data-since says which period it shows. */
export async function renderStatsPanel(container, api, since) {
  const request = {};
  latestRequest.set(container, request);
  const rows = await api.stats(since);
  if (latestRequest.get(container) !== request) return; // the period changed meanwhile
  container.dataset.since = since;
  if (!rows.length) {
    replaceChildren(container, el("p", { class: "muted", dataset: { testid: "stats-empty" } }, "No tool calls in this period."));
    return;
  }
  replaceChildren(
    container,
    el(
      "table",
      { class: "stats-table", dataset: { testid: "stats-table" } },
      el("thead", {}, el("tr", {}, COLUMNS.map((column) => el("th", { scope: "col", class: column.numeric ? "numeric" : null }, column.title)))),
      rows.map((row) => el("tbody", { class: "stats-tool-group" }, figuresRow(row), chartsRow(row))),
    ),
  );
}

/** A long tool name may wrap after its underscores, never inside a word. */
function breakableName(name) {
  return name.split(/(?<=_)/).flatMap((part, index) => (index ? [el("wbr"), part] : [part]));
}

/** The number of calls, and beneath it how many of them never ran to an answer (not failures). */
function callsCell(row) {
  const notRun = [
    row.denied ? `${row.denied}\u00a0declined` : null,
    row.cancelled ? `${row.cancelled}\u00a0cancelled` : null,
  ].filter(Boolean);
  return [
    String(row.calls ?? 0),
    notRun.length ? el("span", { class: "stats-not-run muted", dataset: { testid: "stats-not-run" } }, notRun.join(", ")) : null,
  ];
}

function figuresRow(row) {
  return el(
    "tr",
    { class: "stats-figures", dataset: { testid: "stats-row", tool: row.tool, server: row.server } },
    COLUMNS.map((column) =>
      el("td", { class: column.numeric ? "numeric" : null, dataset: { label: column.title } }, column.cell(row)),
    ),
  );
}

function chartsRow(row) {
  return el(
    "tr",
    { class: "stats-details", dataset: { testid: "stats-charts", tool: row.tool, server: row.server } },
    el(
      "td",
      { colspan: COLUMNS.length },
      el(
        "div",
        { class: "stats-charts" },
        row.latency
          ? el(
              "figure",
              { class: "stats-chart" },
              el("figcaption", {}, "Latency"),
              latencyHistogram(row.latency),
              el("p", { class: "chart-note muted" }, percentiles(row.latency)),
            )
          : null,
        row.calls_over_time
          ? el("figure", { class: "stats-chart" }, el("figcaption", {}, "Calls over time"), callsOverTime(row.calls_over_time))
          : null,
        row.last_error ? lastError(row) : null,
      ),
    ),
  );
}

function percentiles(latency) {
  // p50 and p95 are in the tool's figures already.
  const figures = [["p90", latency.p90], ["p99", latency.p99], ["max", latency.max]];
  // No-break spaces inside each figure: a narrow chart wraps the line between figures, not within one.
  return figures.map(([name, value]) => `${name} ${formatDuration(value)}`.replaceAll(" ", "\u00a0")).join(" · ");
}

function lastError(row) {
  const when = row.last_error_at ? `, ${formatRelativeTime(row.last_error_at)}` : "";
  return el(
    "div",
    { class: "stats-last-error", dataset: { testid: "stats-last-error" } },
    el("span", { class: "stats-last-error-label" }, `Last error${when}`),
    foldedText(row.last_error, { className: "error-text", testid: "stats-error-text" }),
  );
}
