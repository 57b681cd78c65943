// The Standard Webhooks reference library (npm "standardwebhooks") as a
// judge for the Go tests: it signs a payload, or verifies one Jarvis signed.
//
//   node webhook.cjs sign SECRET   stdin {id, timestamp, body} -> stdout {headers}
//   node webhook.cjs verify SECRET stdin {headers, body}       -> exit 0, or 1 with the reason
const { Webhook } = require("standardwebhooks");
const fs = require("fs");

const [cmd, secret] = process.argv.slice(2);
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const wh = new Webhook(secret);
if (cmd === "sign") {
  const signature = wh.sign(input.id, new Date(input.timestamp * 1000), input.body);
  process.stdout.write(JSON.stringify({
    "webhook-id": input.id,
    "webhook-timestamp": String(input.timestamp),
    "webhook-signature": signature,
  }));
} else if (cmd === "verify") {
  try {
    wh.verify(input.body, input.headers);
    process.stdout.write("verified");
  } catch (e) {
    process.stderr.write(String(e && e.message ? e.message : e));
    process.exit(1);
  }
} else {
  process.stderr.write("usage: webhook.cjs sign|verify SECRET");
  process.exit(2);
}
