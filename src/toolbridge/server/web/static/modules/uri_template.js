// Resource templates (RFC 6570, the levels MCP servers use): the variables a template names, and the
// URI it makes from their values.

const EXPRESSION = /\{([+#./;?&]?)([^}]*)\}/g;

/** The variable names of `template`, in order, each once ("{a}/{+b*}" -> ["a", "b"]). */
export function templateVariables(template) {
  const names = [];
  for (const [, , list] of template.matchAll(EXPRESSION)) {
    for (const spec of list.split(",")) {
      const name = spec.replace(/(\*|:\d+)$/, "").trim();
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/** The URI `template` makes with `values` ({name: string}); a variable left empty is left out. */
export function expandTemplate(template, values) {
  return template.replace(EXPRESSION, (_, operator, list) => {
    const named = operator === ";" || operator === "?" || operator === "&";
    // "+" and "#" keep reserved characters ("/" of a path); the others encode them.
    const encode = operator === "+" || operator === "#" ? encodeURI : encodeURIComponent;
    const parts = list
      .split(",")
      .map((spec) => spec.replace(/(\*|:\d+)$/, "").trim())
      .filter((name) => (values[name] ?? "") !== "")
      .map((name) => (named ? `${name}=${encode(values[name])}` : encode(values[name])));
    if (parts.length === 0) return "";
    const first = { "": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&" }[operator];
    const separator = { "": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&" }[operator];
    return first + parts.join(separator);
  });
}
