// Small inline SVG bar charts for the Stats view: a tool's latency histogram and its calls over time.
// Each bar is a <rect data-count> with a <title> (the browser's tooltip) saying what it counts, and
// the chart has a text alternative in its aria-label.

const SVG_NS = "http://www.w3.org/2000/svg";
const HEIGHT = 64;
const LABEL_ROOM = 16; // below the bars, for the axis labels
const GAP = 2;

/** `latency`: the API's {buckets: [{le, count}], p50, p90, p99, max}. */
export function latencyHistogram(latency) {
  const buckets = latency.buckets;
  const labels = buckets.map((bucket, index) => bucketLabel(buckets, index));
  return barChart({
    counts: buckets.map((bucket) => bucket.count),
    barWidth: 20,
    titles: buckets.map((bucket, index) => `${labels[index]}: ${calls(bucket.count)}`),
    // Five readable ticks under the bars: the first, the round decades, and the open-ended last.
    axis: buckets.map((bucket, index) =>
      index === buckets.length - 1 || [0.01, 0.1, 1, 10].includes(bucket.le) ? shortDuration(bucket.le, index, buckets) : null,
    ),
    label: `Latency: ${buckets
      .map((bucket, index) => (bucket.count ? `${calls(bucket.count)} ${labels[index]}` : null))
      .filter(Boolean)
      .join(", ")}`,
    testid: "latency-chart",
  });
}

/** `timeline`: the API's {start, bucket_seconds, calls: [n, ...]}. */
export function callsOverTime(timeline) {
  const start = Date.parse(timeline.start);
  const width = timeline.bucket_seconds * 1000;
  const spans = timeline.calls.map((_, index) => [new Date(start + index * width), new Date(start + (index + 1) * width)]);
  const last = timeline.calls.length - 1;
  return barChart({
    counts: timeline.calls,
    barWidth: Math.max(4, Math.min(14, Math.floor(300 / Math.max(1, timeline.calls.length)) - GAP)),
    titles: spans.map(([from, to], index) => `${timeSpan(from, to, width)}: ${calls(timeline.calls[index])}`),
    axis: timeline.calls.map((_, index) => (index === 0 ? clock(spans[0][0], width) : index === last ? "now" : null)),
    label: `Calls over time, ${period(timeline.bucket_seconds)} per bar, from ${clock(spans[0][0], width)}: ${timeline.calls.join(", ")}`,
    testid: "calls-chart",
  });
}

function barChart({ counts, barWidth, titles, axis, label, testid }) {
  const width = counts.length * (barWidth + GAP) - GAP;
  const highest = Math.max(1, ...counts);
  const chart = svg("svg", {
    class: "chart",
    width,
    height: HEIGHT + LABEL_ROOM,
    viewBox: `0 0 ${width} ${HEIGHT + LABEL_ROOM}`,
    role: "img",
    "aria-label": label,
    "data-testid": testid,
  });
  chart.append(svg("line", { class: "chart-baseline", x1: 0, x2: width, y1: HEIGHT + 0.5, y2: HEIGHT + 0.5 }));
  counts.forEach((count, index) => {
    const x = index * (barWidth + GAP);
    // An empty bucket still gets a sliver, so the scale of the axis stays readable.
    const height = count ? Math.max(2, Math.round((count / highest) * (HEIGHT - 4))) : 1;
    const bar = svg("rect", {
      class: count ? "chart-bar" : "chart-bar empty",
      x,
      y: HEIGHT - height,
      width: barWidth,
      height,
      "data-count": count,
    });
    bar.append(svg("title", {}, titles[index]));
    chart.append(bar);
    if (axis[index]) {
      const anchor = index === 0 ? "start" : index === counts.length - 1 ? "end" : "middle";
      const textX = anchor === "start" ? x : anchor === "end" ? x + barWidth : x + barWidth / 2;
      chart.append(svg("text", { class: "chart-axis", x: textX, y: HEIGHT + 13, "text-anchor": anchor }, axis[index]));
    }
  });
  return chart;
}

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function bucketLabel(buckets, index) {
  const bound = buckets[index].le;
  if (bound === null) return `over ${seconds(buckets[index - 1]?.le ?? 0)}`;
  if (index === 0) return `up to ${seconds(bound)}`;
  return `${seconds(buckets[index - 1].le)} to ${seconds(bound)}`;
}

/** A bucket bound: 10 ms, 250 ms, 1 s, 2.5 s. */
function seconds(bound) {
  return bound < 1 ? `${Math.round(bound * 1000)} ms` : `${bound} s`;
}

function shortDuration(bound, index, buckets) {
  if (bound === null) return `>${shortDuration(buckets[index - 1].le)}`;
  return seconds(bound).replace(" ", "");
}

/** A bucket width: 1 min, 5 min, 1 h, 6 h, 1 day, 7 days. */
function period(totalSeconds) {
  if (totalSeconds < 3600) return `${Math.round(totalSeconds / 60)} min`;
  if (totalSeconds < 86400) return `${Math.round(totalSeconds / 3600)} h`;
  const days = Math.round(totalSeconds / 86400);
  return days === 1 ? "1 day" : `${days} days`;
}

function calls(count) {
  return count === 1 ? "1 call" : `${count} calls`;
}

function clock(date, bucketMs) {
  const options = bucketMs >= 24 * 3600 * 1000 ? { month: "short", day: "numeric" } : { hour: "2-digit", minute: "2-digit" };
  return date.toLocaleString(undefined, options);
}

function timeSpan(from, to, bucketMs) {
  const dayAndTime = { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" };
  const options = bucketMs >= 24 * 3600 * 1000 ? { month: "short", day: "numeric" } : dayAndTime;
  return `${from.toLocaleString(undefined, options)} – ${to.toLocaleString(undefined, options)}`;
}
