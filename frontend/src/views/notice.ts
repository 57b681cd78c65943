// The notice line above the conversation: short messages that go away,
// with an Undo button when the action can be taken back.
import type { Store } from "../store";
import { h } from "../view";

/** Shows the store's notices; returns the function that shows one directly. */
export function mountNotice(store: Store): (text: string, good?: boolean) => void {
  const el = document.getElementById("notice")!;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const show = (text: string, good = false, undo?: () => void) => {
    el.classList.toggle("good", good);
    el.textContent = text;
    if (undo) {
      const b = h("button", { class: "small", type: "button", "data-action": "undo" }, "Undo");
      b.addEventListener("click", () => {
        undo();
        el.hidden = true;
      });
      el.append(" ", b);
    }
    el.hidden = false;
    clearTimeout(timer);
    timer = setTimeout(() => (el.hidden = true), 6000);
  };
  store.subscribe("notice", (n) => show(n.text, n.good, n.undo));
  return show;
}
