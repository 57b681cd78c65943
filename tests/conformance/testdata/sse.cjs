// The WHATWG EventSource implementation from npm ("eventsource") following
// a Jarvis session stream across a dropped connection.
//
//   node sse.cjs URL TOKEN
//
// Lines on stdout, one JSON object each, for the Go test to drive the run:
//   {"open":N}                        the Nth connection is open
//   {"event":TYPE,"id":ID}            an event arrived
//   {"retry":MS}                      the stream's retry field (read by the
//                                     parser EventSource itself uses)
//   {"error":true}                    the connection was lost
//   {"reconnect":{"delayMs":D,"lastEventId":L}}  EventSource dialed again D ms
//                                     after the loss, sending Last-Event-ID L
// It exits when stdin closes.
const { EventSource } = require("eventsource");
const { createParser } = require("eventsource-parser");

const [url, token] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
let opens = 0;
let lostAt = null;

const es = new EventSource(url, {
  fetch: async (input, init) => {
    const headers = { ...(init.headers || {}), Authorization: "Bearer " + token };
    if (lostAt !== null) {
      out({ reconnect: { delayMs: Date.now() - lostAt, lastEventId: headers["Last-Event-ID"] || null } });
      lostAt = null;
    }
    const resp = await fetch(input, { ...init, headers });
    if (!resp.body) return resp;
    // Read the retry field with the same parser EventSource uses, on a copy.
    const [mine, theirs] = resp.body.tee();
    (async () => {
      const parser = createParser({ onRetry: (ms) => out({ retry: ms }), onEvent: () => {} });
      const dec = new TextDecoder();
      try {
        for await (const chunk of mine) parser.feed(dec.decode(chunk, { stream: true }));
      } catch {}
    })();
    return new Response(theirs, { status: resp.status, statusText: resp.statusText, headers: resp.headers });
  },
});
es.onopen = () => out({ open: ++opens });
es.onerror = () => {
  if (lostAt === null) lostAt = Date.now();
  out({ error: true });
};
// ("error" is also EventSource's own connection-loss event, reported above.)
for (const type of ["user.message", "assistant.delta", "assistant.final"]) {
  es.addEventListener(type, (ev) => out({ event: type, id: ev.lastEventId }));
}
process.stdin.on("end", () => { es.close(); process.exit(0); });
process.stdin.resume();
