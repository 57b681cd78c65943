// Keyboard shortcuts of the window: Ctrl+N a new conversation, Ctrl+K the
// conversation filter, Esc stops a running reply (when no dialog is open),
// Ctrl+= / Ctrl+- / Ctrl+0 zoom (kept for the next start).
import type { Actions } from "../actions";

const ZOOM_KEY = "jarvis.zoom";
const ZOOMS = [0.8, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2];

export function mountKeys(actions: Actions): void {
  const store = actions.store;
  let zoom = Number(localStorage.getItem(ZOOM_KEY)) || 1;
  const applyZoom = () => {
    document.documentElement.style.setProperty("--zoom", String(zoom));
    document.documentElement.dataset.zoom = String(zoom);
    localStorage.setItem(ZOOM_KEY, String(zoom));
  };
  const step = (dir: number) => {
    const i = ZOOMS.findIndex((z) => z >= zoom - 0.001);
    zoom = dir === 0 ? 1 : ZOOMS[Math.max(0, Math.min(ZOOMS.length - 1, (i < 0 ? 2 : i) + dir))];
    applyZoom();
  };
  if (zoom !== 1) applyZoom();
  document.addEventListener("keydown", (e) => {
    const mod = e.ctrlKey || e.metaKey;
    if (mod && !e.shiftKey && e.key.toLowerCase() === "n") {
      e.preventDefault();
      void actions.newSession();
    } else if (mod && e.key.toLowerCase() === "k") {
      e.preventDefault();
      document.getElementById("session-filter")?.focus();
    } else if (mod && (e.key === "=" || e.key === "+")) {
      e.preventDefault();
      step(1);
    } else if (mod && e.key === "-") {
      e.preventDefault();
      step(-1);
    } else if (mod && e.key === "0") {
      e.preventDefault();
      step(0);
    } else if (e.key === "Escape" && !document.querySelector(".modal:not([hidden])")) {
      if (store.sessionId && store.transcripts.get(store.sessionId)?.running) void actions.stop();
    }
  });
}
