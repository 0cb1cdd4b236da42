// A small, safe Markdown renderer for model answers. It builds DOM nodes directly, so model text
// is only ever inserted as text: no HTML string is parsed, and raw HTML in the answer shows as text.
//
// Blocks: paragraphs, headings, fenced code (an unclosed fence runs to the end, as while streaming),
// lists (nested by indentation), block quotes, rules and pipe tables.
// Inline: code spans, **bold**, *italic*, ~~strike~~, [links](https://…) and bare URLs, backslash escapes.
// Only http(s) and mailto links become links; anything else stays text.

import { el } from "./dom.js";

export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  fragment.append(...renderBlocks(lines));
  return fragment;
}

// -- blocks ---------------------------------------------------------------------------------------

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w#+.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])\s+/;
const TABLE_DIVIDER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function renderBlocks(lines) {
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i += 1;
    } else if (FENCE.test(line)) {
      i = readFence(lines, i, blocks);
    } else if (HEADING.test(line)) {
      const [, hashes, title] = line.match(HEADING);
      blocks.push(el(`h${hashes.length}`, {}, renderInline(title)));
      i += 1;
    } else if (RULE.test(line)) {
      blocks.push(el("hr"));
      i += 1;
    } else if (QUOTE.test(line)) {
      i = readQuote(lines, i, blocks);
    } else if (LIST_ITEM.test(line)) {
      i = readList(lines, i, blocks);
    } else if (line.includes("|") && i + 1 < lines.length && TABLE_DIVIDER.test(lines[i + 1])) {
      i = readTable(lines, i, blocks);
    } else {
      i = readParagraph(lines, i, blocks);
    }
  }
  return blocks;
}

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);
}

function readFence(lines, start, blocks) {
  const [, fence, language] = lines[start].match(FENCE);
  const body = [];
  let i = start + 1;
  while (i < lines.length && !isClosingFence(lines[i], fence)) {
    body.push(lines[i]);
    i += 1;
  }
  const code = el("code", language ? { class: `language-${language}` } : {}, body.join("\n"));
  blocks.push(el("pre", {}, code));
  return i + 1;
}

function isClosingFence(line, fence) {
  const trimmed = line.trim();
  return trimmed.startsWith(fence) && /^(`+|~+)$/.test(trimmed) && trimmed[0] === fence[0];
}

function readQuote(lines, start, blocks) {
  const inner = [];
  let i = start;
  while (i < lines.length && QUOTE.test(lines[i])) {
    inner.push(lines[i].replace(QUOTE, ""));
    i += 1;
  }
  blocks.push(el("blockquote", {}, renderBlocks(inner)));
  return i;
}

function readList(lines, start, blocks) {
  const ordered = /\d/.test(lines[start].match(LIST_ITEM)[2]);
  const list = el(ordered ? "ol" : "ul");
  if (ordered) {
    const first = parseInt(lines[start].match(LIST_ITEM)[2], 10);
    if (first !== 1) list.setAttribute("start", String(first));
  }
  let i = start;
  while (i < lines.length) {
    const marker = lines[i].match(LIST_ITEM);
    if (!marker || /\d/.test(marker[2]) !== ordered) break;
    const indent = marker[0].length;
    const item = [lines[i].slice(indent)];
    i += 1;
    // The item goes on while lines are indented under it, or are lazy continuations of its text.
    while (i < lines.length) {
      const next = lines[i];
      const indented = next.length - next.trimStart().length >= Math.min(indent, 2);
      if (next.trim() && indented) {
        item.push(next.slice(Math.min(indent, next.length - next.trimStart().length)));
      } else if (next.trim() && !startsBlock(next) && item[item.length - 1].trim()) {
        item.push(next);
      } else if (!next.trim() && i + 1 < lines.length && /^\s{2,}\S/.test(lines[i + 1])) {
        item.push("");
      } else {
        break;
      }
      i += 1;
    }
    list.append(el("li", {}, renderListItem(item)));
    while (i < lines.length && !lines[i].trim() && i + 1 < lines.length && LIST_ITEM.test(lines[i + 1])) {
      i += 1; // a blank line between items keeps the list going
    }
  }
  blocks.push(list);
  return i;
}

function renderListItem(itemLines) {
  const blocks = renderBlocks(itemLines);
  // A tight item is just its text, not a paragraph inside the <li>.
  if (blocks.length >= 1 && blocks[0].tagName === "P") {
    return [...blocks[0].childNodes, ...blocks.slice(1)];
  }
  return blocks;
}

function readTable(lines, start, blocks) {
  const header = splitRow(lines[start]);
  const alignments = splitRow(lines[start + 1]).map((cell) => {
    const left = cell.startsWith(":");
    const right = cell.endsWith(":");
    return right && left ? "center" : right ? "right" : left ? "left" : null;
  });
  const cell = (tag, text, column) =>
    el(tag, alignments[column] ? { style: `text-align: ${alignments[column]}` } : {}, renderInline(text));
  const body = [];
  let i = start + 2;
  while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
    const cells = splitRow(lines[i]);
    body.push(el("tr", {}, header.map((_, column) => cell("td", cells[column] ?? "", column))));
    i += 1;
  }
  blocks.push(
    el(
      "div",
      { class: "table-scroll" },
      el(
        "table",
        {},
        el("thead", {}, el("tr", {}, header.map((text, column) => cell("th", text, column)))),
        el("tbody", {}, body),
      ),
    ),
  );
  return i;
}

function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function readParagraph(lines, start, blocks) {
  const paragraph = [lines[start]];
  let i = start + 1;
  while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) {
    paragraph.push(lines[i]);
    i += 1;
  }
  const children = [];
  paragraph.forEach((line, index) => {
    if (index > 0) children.push(el("br"));
    children.push(...renderInline(line.trim()));
  });
  blocks.push(el("p", {}, children));
  return i;
}

// -- inline ---------------------------------------------------------------------------------------

// Tried at every position; the earliest match wins, ties go to the first rule listed.
const INLINE_RULES = [
  { pattern: /\\([\\`*_{}[\]()#+\-.!~|>])/g, render: (m) => [m[1]] },
  { pattern: /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, render: (m) => [el("code", {}, m[2].trim() || m[2])] },
  { pattern: /!?\[([^\]\n]+)\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)/g, render: (m) => link(m[2], renderInline(m[1]), m[0]) },
  { pattern: /https?:\/\/[^\s<>()"']*[^\s<>()"'.,;:!?*_~]/g, render: (m) => link(m[0], [m[0]], m[0]) },
  { pattern: /\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__/g, render: (m) => [el("strong", {}, renderInline(m[1] ?? m[2]))] },
  { pattern: /~~(?=\S)([\s\S]*?\S)~~/g, render: (m) => [el("del", {}, renderInline(m[1]))] },
  { pattern: /\*(?=[^\s*])([\s\S]*?[^\s*])\*|(?<![\w])_(?=\S)([^_]*?\S)_(?![\w])/g, render: (m) => [el("em", {}, renderInline(m[1] ?? m[2]))] },
];

export function renderInline(text) {
  const nodes = [];
  let position = 0;
  while (position < text.length) {
    const found = earliestMatch(text, position);
    if (!found) break;
    if (found.match.index > position) nodes.push(text.slice(position, found.match.index));
    nodes.push(...found.rule.render(found.match));
    position = found.match.index + found.match[0].length;
  }
  if (position < text.length) nodes.push(text.slice(position));
  return nodes;
}

function earliestMatch(text, position) {
  let best = null;
  for (const rule of INLINE_RULES) {
    rule.pattern.lastIndex = position;
    const match = rule.pattern.exec(text);
    if (match && (!best || match.index < best.match.index)) best = { rule, match };
  }
  return best;
}

const SAFE_LINK = /^(https?:|mailto:)/i;

function link(href, children, original) {
  if (!SAFE_LINK.test(href)) return [original];
  return [el("a", { href, target: "_blank", rel: "noopener noreferrer" }, children)];
}
