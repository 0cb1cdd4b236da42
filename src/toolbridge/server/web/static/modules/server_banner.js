// The banner under the top bar naming every MCP server that failed to start, and why: without it a
// chat just carries on without that server's tools.

import { el, replaceChildren } from "./dom.js";
import { foldedText } from "./folded_text.js";

export class ServerBanner {
  constructor(container) {
    this.container = container;
    // Names of failed servers the user dismissed. Keyed by name, not reason: a server that keeps failing
    // is retried with backoff, and each retry words its reason anew. A server that starts is forgotten,
    // so its next failure shows again.
    this.dismissed = new Set();
  }

  /** `servers`: the API's server list; shows the failed ones, or hides the banner if none. */
  update(servers) {
    const failed = servers.filter((server) => server.enabled !== false && server.state === "failed");
    const failing = new Set(failed.map((server) => server.name));
    for (const name of this.dismissed) if (!failing.has(name)) this.dismissed.delete(name);
    const shown = failed.filter((server) => !this.dismissed.has(server.name));
    if (!shown.length) {
      this.container.hidden = true;
      replaceChildren(this.container);
      return;
    }
    const dismiss = el(
      "button",
      { type: "button", class: "button small", "aria-label": "Dismiss the server warning" },
      "Dismiss",
    );
    dismiss.addEventListener("click", () => {
      for (const server of shown) this.dismissed.add(server.name);
      this.update(servers);
    });
    replaceChildren(
      this.container,
      el("span", { class: "server-banner-icon", "aria-hidden": "true" }, "⚠"),
      el(
        "div",
        { class: "server-banner-body" },
        shown.map((server) =>
          el(
            "div",
            { class: "failed-server", dataset: { testid: "failed-server", server: server.name } },
            el("strong", {}, `Server ${server.name} did not start`),
            " — its tools are not available. ",
            el("a", { href: "#/servers" }, "Details"),
            server.last_error ? foldedText(server.last_error, { className: "failed-server-reason", testid: "failed-server-reason" }) : null,
          ),
        ),
      ),
      dismiss,
    );
    this.container.hidden = false;
  }
}
