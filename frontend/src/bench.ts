// Benchmark hooks for the e2e build's measurements (frontend/e2e/selftest.js):
// they act on a synthetic transcript shown in the window and reach nothing on
// the Go side. main.ts loads this module only when the e2e build's E2E
// object is bound (window.go.e2e.E2E), so a shipped window never runs it.
import type { Store } from "./store";
import { loadMarkdown, renderReply, showReply } from "./reply";
import { Transcript } from "./transcript";
import type { ConversationView } from "./views/conversation";
import { h } from "./view";

export function installBench(store: Store, conv: ConversationView): void {
  const layout = () => void conv.box.offsetHeight; // include layout in the figure
  (window as any).jarvisBench = {
    ready: () => loadMarkdown(),
    load(n: number): number {
      const t0 = performance.now();
      const t = new Transcript();
      t.synthetic(n);
      store.transcripts.set("bench", t);
      store.sessionId = "bench";
      conv.render();
      layout();
      return performance.now() - t0;
    },
    delta(text: string): number {
      const t0 = performance.now();
      conv.applyEffect("bench", store.transcript("bench").apply({ id: "", type: "assistant.delta", data: { text, turn_id: "bench" } }));
      layout();
      return performance.now() - t0;
    },
    // Shows a whole reply in a new message at the end (as opening a session
    // does), with showReply or, for the baseline, one renderReply.
    show(text: string, baseline: boolean): number {
      const el = h("div", { class: "msg assistant" });
      conv.box.append(el);
      const t0 = performance.now();
      if (baseline) el.innerHTML = renderReply(text); // sanitized
      else showReply(el, text, true);
      layout();
      const ms = performance.now() - t0;
      el.remove();
      return ms;
    },
    // Shows a complete reply through the parsing worker (as opening a
    // session does) and says what the worker did: the e2e checks that it
    // runs under the window's Content-Security-Policy.
    async offThread(text: string): Promise<{ html: string; unavailable: boolean; abandoned: number }> {
      const m = await loadMarkdown();
      const el = h("div", { class: "msg assistant" });
      conv.box.append(el);
      await m.showReplyLater(el, text);
      const html = el.innerHTML;
      el.remove();
      return { html, ...m.parseWorkerState() };
    },
    // The same, rendering the whole reply again into a new element, as every
    // delta was shown before showReply: the baseline of the long-reply figure.
    deltaWhole(text: string): number {
      const t0 = performance.now();
      const t = store.transcript("bench");
      for (const k of t.apply({ id: "", type: "assistant.delta", data: { text, turn_id: "bench" } }).changed) {
        const el = conv.els.get(k);
        const it = t.get(k);
        if (!el || !it) continue;
        const whole = el.cloneNode(false) as HTMLElement;
        whole.innerHTML = renderReply(it.text); // sanitized
        el.replaceWith(whole);
        conv.els.set(k, whole);
      }
      layout();
      return performance.now() - t0;
    },
  };
}
