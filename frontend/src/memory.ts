// The Memory view: how memory search finds notes (by their words, or by
// meaning with an embedding model of a local server), the background
// embedding's progress with Pause and Resume, and the offer of an
// embedding model a local server has ("Use nomic-embed-text for memory"),
// also shown under the setup form (docs/guide/memory.md).
import { api, errText, type MemoryRetrieval, type ProvidersInfo } from "./bridge";
import { h } from "./view";

/** An embedding model a local server offers: the first found. */
export interface EmbeddingOffer {
  server: string;
  baseUrl: string;
  model: string;
}

export function embeddingOffer(p: ProvidersInfo | undefined): EmbeddingOffer | undefined {
  for (const s of p?.discovered ?? []) {
    const m = s.embeddingModels?.[0];
    if (m) return { server: s.name, baseUrl: s.baseUrl, model: m };
  }
  return undefined;
}

/** How search finds notes, in words. */
export function retrievalText(r: MemoryRetrieval): string {
  const e = r.embeddings;
  if (r.retrieval === "hybrid" && e) return `By meaning and by words, with ${e.model}.`;
  if (e) return `By words while ${e.model} reads your notes; by meaning too once it has some.`;
  if (r.retrieval === "keyword+synonyms") return "By their words and common synonyms. An embedding model would also find notes by meaning.";
  return "By their words. An embedding model would also find notes by meaning.";
}

/** The background embedding's progress, in words; "" without a model. */
export function progressText(r: MemoryRetrieval): string {
  const e = r.embeddings;
  if (!e) return "";
  const n = (x: number) => x.toLocaleString("en");
  if (e.error) return `Embedding stopped: ${e.error}. It is tried again in a moment; search by words works meanwhile.`;
  if (e.total === 0) return "No notes to embed yet.";
  if (e.embedded >= e.total) return `All ${n(e.total)} passages of your notes are embedded.`;
  const pct = Math.floor((100 * e.embedded) / e.total);
  return `${e.paused ? "Paused at" : "Embedding:"} ${n(e.embedded)} of ${n(e.total)} passages (${pct}%)${e.paused ? "." : "…"}`;
}

/** Whether the view should look again soon: embedding under way. */
export function inProgress(r: MemoryRetrieval): boolean {
  const e = r.embeddings;
  return !!e && !e.paused && !e.error && e.embedded < e.total;
}

export interface MemoryHandlers {
  use(o: EmbeddingOffer): void;
  off(): void;
  pause(paused: boolean): void;
}

/** The view's body for a state (and the offer of a found model, if any). */
export function renderMemory(r: MemoryRetrieval, offer: EmbeddingOffer | undefined, on: MemoryHandlers): HTMLElement {
  const box = h("div", { class: "memory-state" });
  box.append(h("p", { "data-memory": "retrieval" }, retrievalText(r)));
  const e = r.embeddings;
  if (e) {
    const bar = h("progress", { max: String(Math.max(e.total, 1)), value: String(e.embedded), "aria-label": "Notes embedded" });
    box.append(h("p", { class: "memory-progress", "data-memory": "progress", role: "status" }, progressText(r)), bar);
    const acts = h("div", { class: "memory-actions" });
    if (e.embedded < e.total) {
      const b = h("button", { type: "button", class: "small", "data-action": e.paused ? "resume" : "pause" }, e.paused ? "Resume" : "Pause");
      b.addEventListener("click", () => on.pause(!e.paused));
      acts.append(b);
    }
    const off = h("button", { type: "button", class: "small", "data-action": "off" }, "Search by words only");
    off.addEventListener("click", () => on.off());
    acts.append(off);
    box.append(acts);
  } else if (offer) box.append(offerRow(offer, on));
  return box;
}

/** "Use nomic-embed-text for memory: finds notes by meaning" with its button. */
export function offerRow(o: EmbeddingOffer, on: Pick<MemoryHandlers, "use">): HTMLElement {
  const b = h("button", { type: "button", class: "small primary", "data-action": "use-embedding", "data-model": o.model }, `Use ${o.model} for memory`);
  b.addEventListener("click", () => on.use(o));
  return h("div", { class: "memory-offer" }, b, h("span", { class: "hint" }, ` finds notes by meaning (${o.server}, on this computer).`));
}

/**
 * Wires the Memory view (the sidebar's Memory button) and the offer under
 * the setup form. While an embedding is under way the view looks again
 * every 2 s, so the progress moves.
 */
export function mountMemory(flash: (text: string, good?: boolean) => void): void {
  const view = document.getElementById("memory-view")!;
  const setupOffer = document.getElementById("setup-memory")!;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let offer: EmbeddingOffer | undefined;

  const handlers: MemoryHandlers = {
    use: (o) => void act(() => api().UseMemoryEmbedding(o.baseUrl, o.model), `Memory now also finds notes by meaning, with ${o.model}.`),
    off: () => void act(() => api().UseMemoryEmbedding("", ""), "Memory finds notes by their words only."),
    pause: (p) => void act(() => api().PauseMemoryEmbedding(p), p ? "Embedding paused." : "Embedding resumed."),
  };

  const act = async (f: () => Promise<MemoryRetrieval>, done: string) => {
    for (const b of Array.from(document.querySelectorAll<HTMLButtonElement>(".memory-state button, .memory-offer button"))) b.disabled = true;
    try {
      draw(await f());
      flash(done, true);
    } catch (ex) {
      flash(errText(ex));
      await refresh();
    }
  };

  const draw = (r: MemoryRetrieval) => {
    const body = view.querySelector(".memory-body")!;
    body.replaceChildren(renderMemory(r, offer, handlers));
    setupOffer.replaceChildren(!r.embeddings && offer ? offerRow(offer, handlers) : "");
    clearTimeout(timer);
    if (!view.hidden && inProgress(r)) timer = setTimeout(() => void refresh(), 2000);
  };

  const refresh = async () => {
    try {
      draw(await api().MemoryStatus());
    } catch (ex) {
      view.querySelector(".memory-body")!.replaceChildren(h("div", { class: "form-error" }, errText(ex)));
    }
  };

  const close = h("button", { type: "button", class: "icon", "aria-label": "Close" }, "✕");
  close.addEventListener("click", () => {
    view.hidden = true;
    clearTimeout(timer);
  });
  view.replaceChildren(h("div", { class: "setup-head" }, h("h2", {}, "Memory"), close), h("div", { class: "memory-body" }, h("p", { class: "hint" }, "Reading memory's state…")));

  document.getElementById("open-memory")!.addEventListener("click", async () => {
    view.hidden = !view.hidden;
    if (view.hidden) return clearTimeout(timer);
    try {
      offer = embeddingOffer(await api().Providers());
    } catch {
      offer = undefined; // the state below still shows
    }
    await refresh();
  });
  // The setup form looks for local servers: offer their embedding model there too.
  document.addEventListener("jarvis:providers", (ev) => {
    offer = embeddingOffer((ev as CustomEvent<ProvidersInfo>).detail);
    void refresh();
  });
}
