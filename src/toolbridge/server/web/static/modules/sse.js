// Reading a text/event-stream response body (fetch, not EventSource, so the bearer token can go in a
// header). Follows the parts of the SSE format servers use: data, event and id fields, comments.

/** Calls `onMessage({event, data, id})` for each message until the stream ends or `signal` aborts. */
export async function readServerSentEvents(response, onMessage) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let message = emptyMessage();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop(); // the last piece may be a line still arriving
    for (const line of lines) {
      if (line === "") {
        if (message.data.length) onMessage({ event: message.event, data: message.data.join("\n"), id: message.id });
        message = emptyMessage();
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") message.data.push(value);
        else if (field === "event") message.event = value;
        else if (field === "id") message.id = value;
      }
    }
  }
}

function emptyMessage() {
  return { event: "message", data: [], id: null };
}
