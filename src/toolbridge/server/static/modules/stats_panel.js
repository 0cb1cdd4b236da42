// The statistics view: per tool and server, calls, success rate, latency percentiles, cache hits
// and the last error, over a chosen period.

import { el, replaceChildren } from "./dom.js";
import { formatDuration, formatPercent, formatRelativeTime } from "./format.js";

const COLUMNS = [
  { title: "Tool", cell: (row) => el("code", {}, row.tool) },
  { title: "Server", cell: (row) => row.server ?? "" },
  { title: "Calls", numeric: true, cell: (row) => String(row.calls ?? 0) },
  { title: "Success", numeric: true, cell: (row) => formatPercent(row.success_rate) },
  { title: "p50", numeric: true, cell: (row) => formatDuration(row.p50) },
  { title: "p95", numeric: true, cell: (row) => formatDuration(row.p95) },
  { title: "Cache hits", numeric: true, cell: (row) => String(row.cache_hits ?? 0) },
  { title: "Last call", cell: (row) => formatRelativeTime(row.last_called) },
  { title: "Last error", cell: (row) => (row.last_error ? el("span", { class: "error-text" }, row.last_error) : "") },
];

export async function renderStatsPanel(container, api, since) {
  const rows = await api.stats(since);
  if (!rows.length) {
    replaceChildren(container, el("p", { class: "muted", dataset: { testid: "stats-empty" } }, "No tool calls in this period."));
    return;
  }
  replaceChildren(
    container,
    el(
      "div",
      { class: "table-scroll" },
      el(
        "table",
        { class: "stats-table", dataset: { testid: "stats-table" } },
        el("thead", {}, el("tr", {}, COLUMNS.map((column) => el("th", { scope: "col", class: column.numeric ? "numeric" : null }, column.title)))),
        el(
          "tbody",
          {},
          rows.map((row) =>
            el(
              "tr",
              { dataset: { testid: "stats-row" } },
              COLUMNS.map((column) => el("td", { class: column.numeric ? "numeric" : null }, column.cell(row))),
            ),
          ),
        ),
      ),
    ),
  );
}
