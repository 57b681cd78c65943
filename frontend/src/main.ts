// The Jarvis window: a typed store (store.ts), the actions that change it
// through the Go side's bindings (actions.ts), and one view per panel
// (views/) that mounts itself and follows the store. This file only puts
// them together and routes the events of app (bridge.ts) to the actions.
// No markup from a message is ever inserted unsanitized.
import "./style.css";
import { Actions } from "./actions";
import { api, on } from "./bridge";
import { wireAbout } from "./about";
import { mountInbox } from "./inbox";
import { mountMemory } from "./memory";
import { mountReplyNotice } from "./notify";
import { mountLazyPanels } from "./lazy";
import { loadMarkdown } from "./reply";
import { Store } from "./store";
import { mountConfigApproval } from "./views/configapproval";
import { mountConversation } from "./views/conversation";
import { mountHeader } from "./views/header";
import { mountKeys } from "./views/keys";
import { mountSidebarToggle } from "./views/layout";
import { mountModel } from "./views/model";
import { mountNotice } from "./views/notice";
import { mountPrompt } from "./views/prompt";
import { mountSetup } from "./views/setup";
import { mountSidebar } from "./views/sidebar";

async function start(): Promise<void> {
  const store = new Store();
  const actions = new Actions(store, api, loadMarkdown);
  const flash = mountNotice(store);
  mountSidebar(actions);
  mountSidebarToggle(); // the sidebar folds away (views/layout.ts)
  mountHeader(actions, flash);
  mountModel(actions, flash); // the model switch (views/model.ts)
  const conversation = mountConversation(actions);
  mountPrompt(actions);
  mountSetup(actions, flash);
  mountKeys(actions);
  mountConfigApproval(actions); // a config file changed outside Jarvis (views/configapproval.ts)
  wireAbout(flash);
  mountReplyNotice(store); // a long reply finished in the background (notify.ts)
  mountInbox(actions, flash); // tasks' results and approvals (inbox.ts)
  mountMemory(flash); // how memory finds notes, the embedding model (memory.ts)
  // Audit, Permissions, MCP, agent test and the changed-files blocks (undo.ts): loaded on first use (lazy.ts).
  mountLazyPanels(actions, flash);

  window.addEventListener("focus", () => void actions.checkServiceWarning());
  on("stream:event", (ev) => actions.onStreamEvent(ev));
  on("stream:state", (st) => actions.onStreamState(st));
  on("tool:prompts", (ps) => actions.onPrompts(ps));
  on("tool:decision", (d) => actions.onDecision(d));
  on("send:error", (d) => actions.onSendError(d));

  // Benchmark hooks exist in the e2e build only (its E2E object is bound).
  if ((window.go as any)?.e2e?.E2E) (await import("./bench")).installBench(store, conversation);
  await actions.start();
  document.body.dataset.ready = "1";
}

void start();
