// Keyboard shortcuts of the window: Ctrl+N a new conversation, Ctrl+K the
// conversation filter, Esc stops a running reply (when no dialog is open),
// Ctrl+= / Ctrl+- / Ctrl+0 zoom (kept for the next start), and ? (outside a
// text field) or Ctrl+/ the list of them all (SHORTCUTS, a dialog).
import type { Actions } from "../actions";
import { h, modalDialog } from "../view";

/** Every shortcut of the window, as the help lists it. */
export const SHORTCUTS: [string, string][] = [
  ["Enter", "Send the message"],
  ["Shift+Enter", "A new line in the message"],
  ["Ctrl+N", "New conversation"],
  ["Ctrl+K", "Search the conversations"],
  ["Esc", "Stop the reply being written; close a dialog"],
  ["Ctrl+= / Ctrl+- / Ctrl+0", "Larger / smaller / normal text"],
  ["Enter on a permission prompt", "Answers with the button that has the focus (Deny at first)"],
  ["Esc on a permission prompt", "Deny"],
  ["? or Ctrl+/", "This list"],
];

/** The shortcut list's dialog, made once; returns the function that opens it. */
function shortcutHelp(): () => void {
  const close = h("button", { class: "icon", type: "button", "aria-label": "Close" }, "✕");
  const dlg = h("div", { id: "shortcuts", class: "modal", role: "dialog", "aria-modal": "true", "aria-labelledby": "shortcuts-title", hidden: "" },
    h("div", { class: "modal-box" },
      h("div", { class: "setup-head" }, h("h2", { id: "shortcuts-title" }, "Keyboard shortcuts"), close),
      h("dl", { class: "shortcuts" }, ...SHORTCUTS.flatMap(([k, what]) => [h("dt", {}, h("kbd", {}, k)), h("dd", {}, what)])),
    ),
  );
  document.body.append(dlg);
  const hide = () => {
    dlg.hidden = true;
    modal.restore();
  };
  const modal = modalDialog(dlg, hide);
  close.addEventListener("click", hide);
  return () => {
    dlg.hidden = false;
    modal.open(close);
  };
}

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
  const help = shortcutHelp();
  document.addEventListener("keydown", (e) => {
    const mod = e.ctrlKey || e.metaKey;
    const t = e.target as HTMLElement | null;
    const typing = !!t && (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || t.isContentEditable);
    if ((mod && e.key === "/") || (e.key === "?" && !mod && !typing && !document.querySelector(".modal:not([hidden])"))) {
      e.preventDefault();
      help();
    } else if (mod && !e.shiftKey && e.key.toLowerCase() === "n") {
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
