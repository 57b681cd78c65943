// A desktop notification when a long reply finishes while the window is in
// the background (hidden, or another window has the focus), so the user
// need not keep checking. It goes through the App's NotifyUser binding (the
// notify tool's helper): a Wails window has no browser Notification
// permission to ask for.
import { api, on } from "./bridge";
import { plainText } from "./reply";
import type { Store } from "./store";
import { sessionTitle } from "./view";

/** A reply that took at least this long is worth a notification. */
export const LONG_REPLY_MS = 10_000;

interface NotifyAPI {
  NotifyUser(title: string, body: string): Promise<void>;
}

export interface ReplyNoticeDeps {
  notify?: (title: string, body: string) => Promise<void>;
  now?: () => number;
  inBackground?: () => boolean;
}

export function mountReplyNotice(store: Store, deps: ReplyNoticeDeps = {}): void {
  const notify = deps.notify ?? ((t, b) => (api() as unknown as NotifyAPI).NotifyUser(t, b));
  const now = deps.now ?? (() => Date.now());
  const inBackground = deps.inBackground ?? (() => document.hidden || !document.hasFocus());
  const started = new Map<string, number>(); // session/turn → when its user.message came
  on("stream:event", (ev: { sessionId: string; type: string; data?: any }) => {
    const d = ev.data ?? {};
    const key = `${ev.sessionId}/${d.turn_id ?? ""}`;
    if (ev.type === "user.message") {
      started.set(key, now());
      return;
    }
    if (ev.type !== "assistant.final" && ev.type !== "error") return;
    const t0 = started.get(key);
    started.delete(key);
    if (ev.type !== "assistant.final" || d.kind === "status" || !d.text || t0 === undefined) return;
    if (now() - t0 < LONG_REPLY_MS || !inBackground()) return;
    const s = store.session(ev.sessionId);
    const words = plainText(d.text);
    const body = `${s ? sessionTitle(s) + ": " : ""}${words.length > 140 ? words.slice(0, 140) + "…" : words}`;
    // A system without a notification helper just has no notification.
    notify("Jarvis: reply ready", body).catch(() => undefined);
  });
}
