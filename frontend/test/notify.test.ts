// @vitest-environment jsdom
// The desktop notification of a long reply finished in the background.
import { beforeEach, describe, expect, it } from "vitest";
import { LONG_REPLY_MS, mountReplyNotice } from "../src/notify";
import { Store } from "../src/store";
import { fakeBridge, type FakeBridge } from "./fakebridge";

let fb: FakeBridge;
let clock: number;
let background: boolean;
let shown: { title: string; body: string }[];

beforeEach(() => {
  fb = fakeBridge();
  const store = new Store();
  store.sessions = [{ sessionId: "s1", agentId: "general", name: "Picnic plans" }];
  clock = 1_000_000;
  background = true;
  shown = [];
  mountReplyNotice(store, {
    notify: async (title, body) => void shown.push({ title, body }),
    now: () => clock,
    inBackground: () => background,
  });
});

function turn(id: string, ms: number, final: Record<string, unknown> = {}): void {
  fb.emit("stream:event", { sessionId: "s1", id: `${id}-u`, type: "user.message", data: { text: "plan it", turn_id: id } });
  clock += ms;
  fb.emit("stream:event", { sessionId: "s1", id: `${id}-f`, type: "assistant.final", data: { text: "Bring **sandwiches** and a blanket.", turn_id: id, ...final } });
}

describe("the notification of a long reply", () => {
  it("is shown when a reply of more than 10 s ends while the window is in the background, naming the conversation", () => {
    turn("t1", LONG_REPLY_MS + 1000);
    expect(shown).toHaveLength(1);
    expect(shown[0].title).toBe("Jarvis: reply ready");
    expect(shown[0].body).toContain("Picnic plans: ");
    expect(shown[0].body).toContain("sandwiches");
  });

  it("is not shown for a quick reply, a window in front, a status line or an error", () => {
    turn("t1", LONG_REPLY_MS - 1000);
    background = false;
    turn("t2", LONG_REPLY_MS + 1000);
    background = true;
    turn("t3", LONG_REPLY_MS + 1000, { kind: "status", text: "Sent to external agent" });
    fb.emit("stream:event", { sessionId: "s1", id: "e-u", type: "user.message", data: { text: "x", turn_id: "t4" } });
    clock += LONG_REPLY_MS * 2;
    fb.emit("stream:event", { sessionId: "s1", id: "e-e", type: "error", data: { code: "upstream", message: "down", turn_id: "t4" } });
    expect(shown).toEqual([]);
    turn("t5", LONG_REPLY_MS + 1); // and then a long one is
    expect(shown).toHaveLength(1);
  });
});
