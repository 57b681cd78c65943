// The panels the window opens rarely (audit log, permissions, MCP servers,
// an agent's test, the changed-files blocks and their diffs), loaded when
// first used instead of at start-up, as markdown.ts and codeblocks.ts are:
// their code is neither parsed nor run while the window idles
// (docs/BENCHMARKS.md, production binary). What must work before a panel is
// opened stays here: its button, and the MCP and command progress notices.
import type { Actions } from "./actions";
import { errText, on } from "./bridge";
import type { UndoAPI } from "./undo";
import { h } from "./view";

/** An MCP server's progress notification (mcp:progress). */
export interface MCPProgress {
  call: string;
  tool: string;
  progress: number;
  total?: number;
  message?: string;
}

/** A running command's output so far (command:progress, app.CommandProgress). */
export interface CommandProgress {
  call: string;
  bytes: number;
  line?: string;
}

/** A progress notification as a status line. */
export function progressLine(p: MCPProgress): string {
  const of = p.total ? `${p.progress}/${p.total}` : `${p.progress}`;
  return `${p.tool}: ${of}${p.message ? ` — ${p.message}` : ""}`;
}

type Flash = (msg: string, good?: boolean) => void;

/** A running command's output as a status line. */
export function commandLine(p: CommandProgress): string {
  return `running… ${p.bytes} bytes of output${p.line ? `\n${p.line}` : ""}`;
}

/**
 * Puts a running call's progress on its card (an MCP server's progress, or
 * a command's output so far: bytes and the last line), until the card is
 * drawn again with the result.
 */
export function showOnCard(call: string, text: string): void {
  const card = Array.from(document.querySelectorAll<HTMLElement>(".tool-card")).find((c) => c.dataset.call === call);
  if (!card) return;
  let line = card.querySelector(".tool-progress");
  if (!line) card.append((line = h("pre", { class: "tool-progress", "aria-live": "polite" })));
  line.textContent = text;
}

/**
 * Loads a panel on the first click of its button: the click waits (the
 * button shows it is loading) until load() has mounted the panel, whose own
 * handler then gets the click again. A chunk that fails to load is said in
 * the notice and tried again on the next click.
 */
export function onFirstClick(button: HTMLElement, load: () => Promise<unknown>, flash: Flash): void {
  let loading = false;
  const done = (): void => {
    loading = false;
    button.removeAttribute("aria-busy");
    delete button.dataset.loading;
  };
  // On the document, in the capture phase: before any listener of the button.
  const first = (e: Event): void => {
    if (!(e.target instanceof Node) || !button.contains(e.target)) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    if (loading) return;
    loading = true;
    button.setAttribute("aria-busy", "true");
    button.dataset.loading = "1";
    load().then(
      () => {
        document.removeEventListener("click", first, true);
        done();
        button.click();
      },
      (err) => {
        done();
        flash(`Could not load this panel: ${errText(err)}`);
      },
    );
  };
  document.addEventListener("click", first, true);
}

/** Wires the rarely opened panels to load on first use. */
export function mountLazyPanels(actions: Actions, flash: Flash): void {
  const $ = (id: string) => document.getElementById(id)!;
  onFirstClick($("open-audit"), () => import("./views/audit").then((m) => m.mountAudit(actions)), flash);

  const perms = h("button", { id: "open-permissions", class: "small", type: "button", title: "Rules saved with “Always allow”: see, edit, revoke" }, "Permissions");
  $("open-audit").after(perms);
  onFirstClick(perms, () => import("./views/permissions").then((m) => m.mountPermissions(actions)), flash);

  const mcp = h("button", { id: "open-mcp", class: "small", type: "button", title: "MCP servers and their tools" }, "MCP");
  $("open-about").before(mcp);
  onFirstClick(mcp, () => import("./mcp").then((m) => m.mountMCP(flash)), flash);
  // A server's question (elicitation) can come at any time: its dialog
  // loads with the first one.
  on("mcp:elicit", (e: unknown) => {
    import("./elicit").then((m) => m.showElicit(e as import("./elicit").Elicitation, flash), (err) => flash(`Could not show a server's question: ${errText(err)}`));
  });
  on("mcp:elicit-done", (id: string) => document.querySelector(`[data-elicit-id="${CSS.escape(id)}"]`)?.remove());
  on("mcp:progress", (p: MCPProgress) => {
    flash(progressLine(p), true);
    showOnCard(p.call, progressLine(p));
  });
  on("command:progress", (p: CommandProgress) => {
    flash(`run_command: ${p.bytes} bytes of output${p.line ? ` — ${p.line}` : ""}`, true);
    showOnCard(p.call, commandLine(p));
  });

  // The Test dialog opens from the sidebar (store topic agentTest); it
  // opens once it can run a test, the Test buttons showing the wait.
  let agentTest: Promise<void> | undefined;
  const off = actions.store.subscribe("agentTest", (a) => {
    const buttons = Array.from(document.querySelectorAll<HTMLElement>('#agents button[data-action="test"]'));
    for (const b of buttons) b.dataset.loading = "1";
    agentTest ??= import("./views/agenttest").then((m) => {
      off();
      m.mountAgentTest(actions);
    });
    agentTest.then(
      () => actions.store.publish("agentTest", a),
      (err) => {
        agentTest = undefined;
        flash(`Could not load the test: ${errText(err)}`);
      },
    ).finally(() => {
      for (const b of buttons) delete b.dataset.loading;
    });
  });

  // The changed-files blocks belong to an open session, and About shows
  // their storage: loaded with the first session opened or the first About.
  let undo: Promise<void> | undefined;
  const loadUndo = (): Promise<void> =>
    (undo ??= import("./undo").then((m) => {
      const box = $("messages");
      m.mountUndo({ box, settings: $("about"), sessionId: () => actions.store.sessionId, api: () => actions.api() as unknown as UndoAPI });
    })).catch((err) => {
      undo = undefined;
      throw err;
    });
  const offOpened = actions.store.subscribe("opened", () => {
    offOpened();
    loadUndo().catch(() => undefined);
  });
  onFirstClick($("open-about"), loadUndo, flash);
}
