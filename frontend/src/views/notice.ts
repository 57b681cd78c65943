// The notice line above the conversation: short messages that go away.
import type { Store } from "../store";

/** Shows the store's notices; returns the function that shows one directly. */
export function mountNotice(store: Store): (text: string, good?: boolean) => void {
  const el = document.getElementById("notice")!;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const show = (text: string, good = false) => {
    el.classList.toggle("good", good);
    el.textContent = text;
    el.hidden = false;
    clearTimeout(timer);
    timer = setTimeout(() => (el.hidden = true), 6000);
  };
  store.subscribe("notice", (n) => show(n.text, n.good));
  return show;
}
