// The conversation pane and the composer: the open session's transcript
// (transcript.ts) as messages, tool cards and round-table cards, streamed
// replies as sanitized Markdown (reply.ts), only the newest messages in the
// DOM, following the end while the user is there; Enter sends, Stop stops.
import type { Actions } from "../actions";
import { errText, openExternal } from "../bridge";
import { onMarkdownLoaded, plainText, showReply, showReplyLater } from "../reply";
import { roundTableCard } from "../roundtable";
import { planCard } from "./plan";
import { diffCard } from "./diffcard";
import { agentChoicePicker } from "./agentchoice";
import { signInForm } from "./signin";
import type { Effect, Item, ToolMedia } from "../transcript";
import { copyText, h } from "../view";
import { usageLine } from "../usage";
import { fileIcon, mountAttachments, splitTextFiles, withTextFiles, type SentFile } from "../attach";
import { plainError } from "../errors";
import { riskWord } from "../prompt";
import { agentItems, mountSlashMenu } from "../slash";
import { ATTACH_EVENT, mcpPromptItems } from "../mcp";

/** What the conversation view offers its host (the e2e build's benchmark hooks). */
export interface ConversationView {
  render(): void;
  applyEffect(sessionId: string, eff: Effect): void;
  /** The element shown for each item key. */
  els: Map<string, HTMLElement>;
  box: HTMLElement;
}

// Only the newest messages are in the DOM; older ones are added on demand.
// This keeps appending a delta cheap however long the session is.
const WINDOW = 120;

export function mountConversation(actions: Actions): ConversationView {
  const store = actions.store;
  const box = document.getElementById("messages")!;
  const input = document.getElementById("input") as HTMLTextAreaElement;
  const stopBtn = document.getElementById("stop")!;
  // An ACP agent's modes and models, above the composer (agentchoice.ts).
  const picker = agentChoicePicker(() => actions.api());
  document.getElementById("composer")?.before(picker.el);
  const showPicker = () => {
    const a = store.agent(store.current()?.agentId ?? store.agentId);
    picker.show(store.sessionId, a?.provider === "acp");
  };
  const els = new Map<string, HTMLElement>();
  let shownFrom = 0;
  // Whether the view follows the end: the user's own scrolling decides
  // (a scroll event leaves it on only near the end), not the height at the
  // moment of an event, which a tool card or a reply rendered off the
  // thread may have grown in between.
  let follow = true;
  // "↓ New messages": shown when output arrives while the user reads above.
  const newer = h("button", { class: "small new-messages", type: "button", "data-action": "to-end", hidden: "" }, "↓ New messages");
  box.after(newer);
  newer.addEventListener("click", () => {
    follow = true;
    newer.hidden = true;
    box.scrollTop = box.scrollHeight;
  });
  const toEnd = () => {
    if (follow) box.scrollTop = box.scrollHeight;
  };
  box.addEventListener("scroll", () => {
    follow = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
    if (follow) newer.hidden = true;
  });
  // Before the first word of a reply: "Waiting for <model>… 9 s".
  const waiting = h("div", { class: "msg status waiting", "data-key": "waiting", role: "status" });
  let waitTimer: ReturnType<typeof setInterval> | undefined;
  let waitSince = 0;
  const showWaiting = () => {
    const t = store.sessionId ? store.transcripts.get(store.sessionId) : undefined;
    const last = t?.items[t.items.length - 1];
    const on = !!t?.running && last?.kind === "user";
    if (!on) {
      clearInterval(waitTimer);
      waitTimer = undefined;
      waiting.remove();
      return;
    }
    if (!waitTimer) {
      waitSince = Date.now();
      waitTimer = setInterval(showWaiting, 1000);
    }
    const a = store.agent(store.current()?.agentId ?? store.agentId);
    const who = a?.model || a?.displayName || "the agent";
    const s = Math.floor((Date.now() - waitSince) / 1000);
    waiting.textContent = `Waiting for ${who}…${s >= 1 ? ` ${s} s` : ""}`;
    if (waiting.parentElement !== box || box.lastElementChild !== waiting) box.append(waiting);
  };
  // Content that grows after its event is followed too: a reply parsed off
  // the thread (a mutation), and a message whose real height replaces its
  // estimate once it is on screen (content-visibility: a resize).
  new MutationObserver(toEnd).observe(box, { childList: true, subtree: true, characterData: true });
  const sizes = typeof ResizeObserver === "undefined" ? undefined : new ResizeObserver(toEnd);

  const messageEl = (it: Item): HTMLElement => {
    let el = els.get(it.key);
    if (!el) {
      el = h("div", { class: `msg ${it.kind}`, "data-key": it.key });
      els.set(it.key, el);
      sizes?.observe(el);
    }
    if (it.turnId) el.dataset.turn = it.turnId; // undo.ts places "N files changed" after a turn
    try {
      fill(el, it, actions);
    } catch (ex) {
      // One message must not stop the rest of a conversation from showing.
      console.error("message", it.key, ex);
      el.textContent = it.text;
    }
    return el;
  };

  // A new conversation names who answers (agent and model) and offers a start.
  const emptyState = (): HTMLElement => {
    const a = store.agent(store.current()?.agentId ?? store.agentId);
    const who = a ? `${a.displayName}${a.model ? ` (model ${a.model})` : ""}` : "the selected agent";
    const starts = h("div", { class: "starters" });
    for (const text of ["Summarize the files in my workspace", "Help me plan my day", "Explain a piece of code I paste"]) {
      const b = h("button", { class: "small", type: "button", "data-action": "starter" }, text);
      b.addEventListener("click", () => {
        input.value = text;
        input.focus();
      });
      starts.append(b);
    }
    return h("div", { class: "empty" }, h("p", {}, `A new conversation with ${who}. Enter sends, Shift+Enter adds a line.`), starts);
  };

  const showStop = () => {
    stopBtn.hidden = !(store.sessionId && store.transcripts.get(store.sessionId)?.running);
  };

  const renderWindow = () => {
    const t = store.transcript(store.sessionId);
    const frag = document.createDocumentFragment();
    if (shownFrom > 0) {
      const more = h("button", { class: "small earlier", type: "button" }, `Show ${Math.min(WINDOW, shownFrom)} earlier messages`);
      more.addEventListener("click", () => {
        const fromBottom = box.scrollHeight - box.scrollTop;
        shownFrom = Math.max(0, shownFrom - WINDOW);
        renderWindow();
        box.scrollTop = box.scrollHeight - fromBottom;
      });
      frag.append(more);
    }
    for (const it of t.items.slice(shownFrom)) frag.append(messageEl(it));
    if (t.items.length === 0) frag.append(emptyState());
    box.replaceChildren(frag);
  };

  const render = () => {
    els.clear();
    sizes?.disconnect();
    if (!store.sessionId) {
      box.replaceChildren(h("div", { class: "empty" }, "Pick a session on the left or just type: a new conversation starts with the selected agent."));
    } else {
      shownFrom = Math.max(0, store.transcript(store.sessionId).items.length - WINDOW);
      renderWindow();
      follow = true;
      newer.hidden = true;
      showWaiting();
      toEnd();
    }
    showStop();
    showPicker();
  };

  const applyEffect = (sessionId: string, eff: Effect) => {
    if (eff.finished && store.speak && sessionId === store.sessionId) speak(eff.finished.text);
    if (sessionId !== store.sessionId) return;
    if (eff.choices) {
      showPicker(); // a new conversation's first turn: the picker learns its session
      picker.set(sessionId, eff.choices);
    }
    for (const k of eff.removed) {
      const gone = els.get(k);
      if (gone) sizes?.unobserve(gone);
      gone?.remove();
      els.delete(k);
    }
    const t = store.transcript(sessionId);
    for (const k of new Set(eff.changed)) {
      const it = t.get(k);
      if (!it) continue;
      const existed = els.has(k);
      const el = messageEl(it);
      if (!existed || !el.isConnected) {
        box.querySelector(":scope > .empty")?.remove();
        box.append(el);
      }
    }
    if (!follow && eff.changed.length) newer.hidden = false;
    showWaiting();
    toEnd();
    showStop();
  };

  store.subscribe("messages", ({ loading }) => {
    if (loading && store.sessionId) {
      els.clear();
      box.replaceChildren(h("div", { class: "empty" }, "Loading…"));
      showStop();
    } else render();
  });
  store.subscribe("effect", ({ sessionId, eff }) => applyEffect(sessionId, eff));
  store.subscribe("opened", () => input.focus());

  // Replies rendered before the Markdown renderer loaded are shown again.
  onMarkdownLoaded(() => {
    if (!store.sessionId) return;
    const t = store.transcript(store.sessionId);
    for (const [key, el] of els) {
      const it = t.get(key);
      if (it && (it.kind === "assistant" || it.kind === "thought" || it.kind === "roundtable")) fill(el, it, actions);
    }
  });

  const attached = mountAttachments(document.getElementById("composer")!, (text) => store.publish("notice", { text, good: false })); // attach.ts
  // A resource attached from the MCP panel (mcp.ts): a text file to the composer.
  document.addEventListener(ATTACH_EVENT, (e) => {
    const a = (e as CustomEvent<{ name: string; content: string }>).detail;
    if (a?.name) attached.restore([{ name: a.name, size: a.content.length, kind: "text", content: a.content }]);
  });
  const send = () => {
    const text = input.value;
    const files = attached.take();
    if (!text.trim() && !files.length) return;
    input.value = "";
    follow = true; // what the user sends is always brought into view
    const images = files.filter((f) => f.kind === "image").map((f) => f.content);
    void actions.send(withTextFiles(text, files), images).then((sent) => {
      if (sent) return;
      if (!input.value) input.value = text; // no session could be started: keep the words
      attached.restore(files);
    });
  };
  // The "/" menu (slash.ts) before the Enter that sends: while it is open
  // Enter chooses. Its sources: the agent's commands, the MCP prompts.
  mountSlashMenu(input, [
    () => agentItems(store.sessionId ? store.transcripts.get(store.sessionId)?.commands ?? [] : []),
    mcpPromptItems,
  ], (text) => store.publish("notice", { text, good: false }));
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  document.getElementById("composer")!.addEventListener("submit", (e) => {
    e.preventDefault();
    send();
  });
  stopBtn.addEventListener("click", () => void actions.stop());
  // Links in replies open in the user's browser, never in this window.
  document.addEventListener("click", (e) => {
    const a = (e.target as Element | null)?.closest?.("a");
    if (!a) return;
    e.preventDefault();
    const href = a.getAttribute("href");
    if (href && a.dataset.external) openExternal(href);
  });
  render();
  return { render, applyEffect, els, box };
}

function speak(text: string): void {
  if (!("speechSynthesis" in window)) return;
  window.speechSynthesis.speak(new SpeechSynthesisUtterance(plainText(text).slice(0, 2000)));
}

/** A message's actions: copy, edit a copy, ask again, retry, continue. */
function messageActions(it: Item, actions: Actions): HTMLElement {
  const bar = h("div", { class: "msg-actions" });
  const add = (action: string, label: string, title: string, fn: (b: HTMLElement) => void) => {
    const b = h("button", { class: "icon", type: "button", "data-action": action, title }, label);
    b.addEventListener("click", () => fn(b));
    bar.append(b);
  };
  const notice = (text: string, good = false) => actions.store.publish("notice", { text, good });
  if (it.kind === "user" || it.kind === "assistant") {
    add("copy", "Copy", it.kind === "assistant" ? "Copy the reply (its Markdown)" : "Copy the message", (b) => {
      copyText(it.text).then(
        () => {
          b.textContent = "Copied";
          setTimeout(() => (b.textContent = "Copy"), 1500);
        },
        (ex) => notice(`Could not copy: ${ex?.message ?? ex}`),
      );
    });
  }
  if (it.kind === "user" && it.turnId) {
    add("edit", "Edit", "Change this message and send it again; the conversation continues from it, the earlier version stays", (b) => editInPlace(b.closest(".msg") as HTMLElement, it, actions));
  }
  if (it.kind === "assistant" && it.turnId) add("regenerate", "Regenerate", "Answer again in place; the earlier answer stays as a version", () => void actions.askAgain(it.key));
  if (it.kind === "error") {
    const pe = plainError(it.code, it.text);
    if (pe.actions.includes("ollama")) add("start-ollama", "Start Ollama", "Start the Ollama model server on this computer", (b) => void startOllama(b, actions));
    if (pe.actions.includes("setup")) add("setup", "Set up a model", "Choose the model that answers", () => actions.store.publish("setup", { message: pe.text }));
    if (pe.actions.includes("retry") && it.turnId) add("retry", "Retry", "Ask again in place of this error", () => void actions.askAgain(it.key));
    const agentId = actions.store.current()?.agentId;
    if (it.code === "acp_auth_required" && agentId) {
      add("sign-in", "Sign in", "The ways this agent offers to sign in", (b) => {
        const msg = b.closest(".msg") as HTMLElement;
        msg.querySelector(":scope > .sign-in")?.remove();
        msg.append(signInForm(() => actions.api(), agentId, () => void actions.askAgain(it.key)));
      });
    }
  }
  if (it.kind === "user" && it.versions && it.versions.turns.length > 1) bar.prepend(versionNav(it, actions));
  if (it.kind === "assistant" && it.usage) {
    const u = usageLine(it.usage);
    bar.append(h("span", { class: "msg-usage", title: u.title }, u.text));
  }
  if (it.kind === "stopped") add("continue", "Continue", "Ask the agent to go on from where it stopped", () => void actions.send("Continue from where you stopped."));
  return bar;
}

/**
 * "Start Ollama" (the user's click): the app starts it and waits until it
 * answers; the button says so meanwhile, and the notice says what came of
 * it (running: Retry sends again; not installed: how to install it).
 */
async function startOllama(b: HTMLElement, actions: Actions): Promise<void> {
  const notice = (text: string, good = false) => actions.store.publish("notice", { text, good });
  b.setAttribute("disabled", "");
  b.textContent = "Starting Ollama…";
  try {
    const r = await actions.api().StartOllama();
    if (r.running) {
      notice(`${r.message} Choose Retry to ask again.`, true);
      // It answers now (checked): the header no longer says "Model unreachable".
      const st = actions.store;
      const agentId = st.current()?.agentId;
      if (agentId && st.modelDown.delete(agentId)) st.publish("conn", st.sessionId);
    } else notice(r.message);
    b.textContent = r.running ? "Ollama is running" : "Start Ollama";
    if (!r.running) b.removeAttribute("disabled");
  } catch (ex) {
    notice(errText(ex));
    b.textContent = "Start Ollama";
    b.removeAttribute("disabled");
  }
}

/** "< 1/2 >": the versions of a message, each the branch of the conversation through it. */
function versionNav(it: Item, actions: Actions): HTMLElement {
  const v = it.versions!;
  const go = (to: number) => () => void actions.showVersion(v.turns[to]);
  const prev = h("button", { class: "icon", type: "button", "data-action": "version-prev", "aria-label": "Previous version", title: "Previous version" }, "‹");
  const next = h("button", { class: "icon", type: "button", "data-action": "version-next", "aria-label": "Next version", title: "Next version" }, "›");
  if (v.shown <= 0) prev.setAttribute("disabled", "");
  else prev.addEventListener("click", go(v.shown - 1));
  if (v.shown >= v.turns.length - 1) next.setAttribute("disabled", "");
  else next.addEventListener("click", go(v.shown + 1));
  return h("span", { class: "versions", "data-versions": `${v.shown + 1}/${v.turns.length}` }, prev, h("span", { class: "version-count" }, `${v.shown + 1} / ${v.turns.length}`), next);
}

/** Edit in place: the message becomes a text field; Save & send branches the conversation there. */
function editInPlace(el: HTMLElement | null, it: Item, actions: Actions): void {
  if (!el) return;
  const ta = h("textarea", { class: "edit-field", rows: "3", "aria-label": "Edit the message" }) as HTMLTextAreaElement;
  ta.value = it.text;
  const save = h("button", { class: "small primary", type: "button", "data-action": "edit-send" }, "Save & send");
  const cancel = h("button", { class: "small", type: "button", "data-action": "edit-cancel" }, "Cancel");
  const form = h("div", { class: "edit-form" }, ta, h("div", { class: "edit-buttons" }, cancel, save));
  const close = () => {
    form.remove();
    el.classList.remove("editing");
  };
  save.addEventListener("click", () => {
    const text = ta.value;
    close();
    void actions.editMessage(it.key, text);
  });
  cancel.addEventListener("click", close);
  ta.addEventListener("keydown", (e) => {
    if (e.key === "Escape") close();
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      save.click();
    }
  });
  el.querySelector(":scope > .edit-form")?.remove();
  el.classList.add("editing");
  el.append(form);
  ta.focus();
}

// A reply's code blocks get highlighting, a label and Copy from the first
// delta on, so nothing moves when the reply ends (codeblocks.ts; the
// highlighter loads on the first reply that has code).
let codeblocks: typeof import("../codeblocks") | undefined;

function decorate(b: HTMLElement, actions: Actions, final = true): void {
  if (!b.querySelector("pre")) return;
  const onErr = (text: string) => actions.store.publish("notice", { text, good: false });
  if (codeblocks) {
    codeblocks.decorateCode(b, onErr, final);
    return;
  }
  void import("../codeblocks").then(
    (m) => {
      codeblocks = m;
      m.decorateCode(b, onErr, final);
    },
    () => undefined, // left plain
  );
}

/** A sent message's text files: a chip each; a click shows or hides the file under them. */
function sentFiles(files: SentFile[]): HTMLElement {
  const box = h("div", { class: "sent-files" });
  const chips = h("div", { class: "attachments" });
  const preview = h("pre", { class: "sent-file-preview", hidden: "" });
  let open = -1;
  files.forEach((f, i) => {
    const chip = h("button", { class: "attachment", type: "button", "data-kind": "text", "aria-expanded": "false", title: `Show ${f.name}` }, h("span", { class: "attachment-name" }, f.name), h("span", { class: "attachment-size" }, f.size));
    chip.prepend(fileIcon("text"));
    chip.addEventListener("click", () => {
      open = open === i ? -1 : i;
      preview.hidden = open < 0;
      preview.textContent = open < 0 ? "" : files[open].content;
      chips.querySelectorAll("button").forEach((b, j) => b.setAttribute("aria-expanded", String(j === open)));
    });
    chips.append(chip);
  });
  box.append(chips, preview);
  return box;
}

/** The part of a message element that holds its text (the actions sit beside it). */
function body(el: HTMLElement, tag = "div"): HTMLElement {
  let b = el.querySelector<HTMLElement>(":scope > .msg-text");
  if (!b) {
    b = h(tag, { class: "msg-text" });
    el.prepend(b);
  }
  return b;
}

function withActions(el: HTMLElement, it: Item, actions: Actions): void {
  el.querySelector(":scope > .msg-actions")?.remove();
  el.append(messageActions(it, actions));
}

function fill(el: HTMLElement, it: Item, actions: Actions): void {
  switch (it.kind) {
    case "user": {
      // Attached text files as chips (name, size; a click shows the file), not as fenced text.
      const { text, files } = splitTextFiles(it.text);
      body(el).textContent = text;
      if (files.length) body(el).append(sentFiles(files));
      if (it.images) body(el).append(h("div", { class: "msg-images" }, fileIcon("image"), `${it.images === 1 ? "1 image" : `${it.images} images`} attached`));
      withActions(el, it, actions);
      break;
    }
    case "assistant": {
      // A complete reply shown for the first time (opening a session) is
      // parsed off the window's thread; a streaming one as it grows.
      const b = body(el);
      if (it.final && !b.hasChildNodes()) void showReplyLater(b, it.text).then(() => decorate(b, actions)); // sanitized
      else showReply(b, it.text, !!it.final); // sanitized
      decorate(b, actions, !!it.final);
      el.classList.toggle("streaming", !it.final);
      if (it.final) withActions(el, it, actions);
      else el.querySelector(":scope > .msg-actions")?.remove();
      break;
    }
    case "stopped":
      body(el).textContent = it.text;
      withActions(el, it, actions);
      break;
    case "status":
      el.replaceChildren(h("em", {}, it.text));
      break;
    case "plan":
      el.replaceChildren(planCard(it.plan ?? []));
      break;
    case "diff":
      el.replaceChildren(diffCard(it.diff!));
      break;
    case "thought": {
      const body = h("div", {});
      void showReplyLater(body, it.text); // sanitized
      el.replaceChildren(h("details", { class: "thought" }, h("summary", {}, "Thoughts"), body));
      break;
    }
    case "error":
      body(el).textContent = plainError(it.code, it.text).text;
      el.setAttribute("role", "alert");
      withActions(el, it, actions);
      break;
    case "tool": {
      const open = el.querySelector(":scope > details.tool-card")?.hasAttribute("open");
      const card = toolCard(it);
      if (open) card.setAttribute("open", ""); // an update keeps a card the user opened open
      el.replaceChildren(card);
      break;
    }
    case "roundtable":
      el.replaceChildren(roundTableCard(it.rt!));
      if (it.rt!.done) el.firstElementChild!.append(runDetailsButton(actions, it.rt!.runId));
      break;
  }
}

// The whole stored run (every agent's answers), on demand.
function runDetailsButton(actions: Actions, runId: string): HTMLElement {
  const box = h("div", { class: "rt-answers" });
  const b = h("button", { class: "small", type: "button", "data-action": "rt-answers" }, "Show every agent's answers");
  b.addEventListener("click", async () => {
    b.setAttribute("disabled", "");
    try {
      const run = await actions.api().Roundtable(runId);
      const ul = h("ul", {});
      for (const x of run.answers ?? []) {
        ul.append(h("li", {}, h("b", {}, String(x.agent)), ` · ${x.phase} · ${x.kind}`, h("pre", { class: "audit-pre" }, JSON.stringify(x.data, null, 2))));
      }
      box.replaceChildren(h("div", { class: "hint" }, `Run ${run.id}: ${run.status}, ${run.participants?.length ?? 0} participants, started ${run.created_at}`), ul);
    } catch (ex) {
      box.replaceChildren(h("div", { class: "form-error" }, errText(ex)));
      b.removeAttribute("disabled");
    }
  });
  box.append(b);
  return box;
}

/**
 * What a run_command result says of the run, for its card: exit code,
 * duration, sandbox and network ("exit 0 · 84 ms · sandboxed (…), no
 * network"), or why Jarvis stopped it; undefined for any other result.
 */
export function commandRun(tool: string, result?: string): string | undefined {
  if (tool !== "run_command" || !result) return undefined;
  try {
    const r = JSON.parse(result) as { exit_code?: number; duration_ms?: number; sandbox?: string; stopped?: string };
    if (typeof r.exit_code !== "number" || typeof r.sandbox !== "string") return undefined;
    return [r.stopped ? `stopped: ${r.stopped}` : `exit ${r.exit_code}`, `${r.duration_ms ?? 0} ms`, r.sandbox].join(" · ");
  } catch {
    return undefined;
  }
}

/**
 * What a tool call acts on, in one short line for its collapsed card: the
 * path, address, command or query among its arguments ("" if none).
 */
export function toolTarget(args: unknown): string {
  if (!args || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" ? v : Array.isArray(v) ? v.filter((x) => typeof x === "string").join(" ") : "");
  if (typeof a.program === "string") return [a.program, str(a.args)].filter(Boolean).join(" ");
  for (const k of ["path", "file_path", "file", "url", "uri", "command", "cmd", "query", "pattern", "dir", "directory", "name", "to"]) {
    const v = str(a[k]);
    if (v) return v;
  }
  return "";
}

/** Image types the card shows (no SVG: an image that can hold script). */
const shownImages = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const mediaURLs = new WeakMap<ToolMedia, string>();

/**
 * An image (inline) or audio clip (a player) of a tool's result, from a
 * blob: URL (the window's CSP allows blob: images and media, no data: URL);
 * undefined for another type or broken base64.
 */
export function mediaElement(m: ToolMedia): HTMLElement | undefined {
  const mime = String(m.mimeType ?? "").toLowerCase();
  const isImage = m.type === "image" && shownImages.has(mime);
  const isAudio = m.type === "audio" && mime.startsWith("audio/");
  if (!isImage && !isAudio) return undefined;
  let url = mediaURLs.get(m); // one blob per clip, however often the card is drawn again
  if (!url) {
    let bytes: Uint8Array;
    try {
      bytes = Uint8Array.from(atob(m.data), (c) => c.charCodeAt(0));
    } catch {
      return undefined;
    }
    url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: mime }));
    mediaURLs.set(m, url);
  }
  if (isImage) return h("img", { class: "tool-media tool-image", src: url, alt: `image from the tool (${mime})` });
  return h("audio", { class: "tool-media tool-audio", src: url, controls: "" });
}

/**
 * A tool call's card: one line (tool, what it acts on, risk and decision
 * badges) that opens on a click to the arguments and the result.
 */
export function toolCard(it: Item): HTMLElement {
  const t = it.tool!;
  const badges = h("span", { class: "badges" });
  // The risk word of the permission prompt (riskWord): the gate's class once decided.
  const risk = t.class || t.risk;
  if (risk) badges.append(h("span", { class: `badge risk-${risk}`, "data-risk": risk, title: "how risky Jarvis judged this call" }, riskWord(risk)));
  const decision = t.pending ? "waiting" : t.source === "service" ? "service" : t.decision ?? "";
  if (t.source === "service") badges.append(h("span", { class: "badge decision-service", "data-decision": "service", title: "run by the agent service itself: no permission prompt" }, t.ok ? "ran in the service" : "failed in the service"));
  else if (t.source === "agent") badges.append(h("span", { class: "badge decision-service", "data-decision": "agent", title: "run by the agent's own program, outside Jarvis's gate" }, "ran inside the agent, not gated"));
  else if (decision) badges.append(h("span", { class: `badge decision-${decision}`, "data-decision": decision }, decision + (t.decidedBy ? ` · ${t.decidedBy}` : "")));
  if (decision === "allowed" && !t.pending && t.ok === false && (t.error || t.result)) badges.append(h("span", { class: "badge decision-denied", title: "the tool ran and reported an error (open the card)" }, "failed"));
  if (t.untrusted?.length) badges.append(h("span", { class: "badge untrusted", title: `This conversation had read: ${t.untrusted.join("; ")}` }, "after untrusted content"));
  const target = toolTarget(t.arguments);
  const card = h("details", { class: "tool-card" + (t.source === "service" ? " service" : ""), "data-call": t.id, "data-decision": decision, "data-tool": t.name },
    h("summary", { class: "tool-head", title: "Show the arguments and the result" },
      h("span", { class: "tool-name" }, t.name),
      h("span", { class: "tool-target", title: target }, target),
      badges,
    ),
  );
  const ran = commandRun(t.name, t.ok ? t.result : undefined);
  if (ran) badges.append(h("span", { class: "badge command-run", title: "how the program ran" }, ran));
  if (t.reason) card.append(h("div", { class: "tool-reason" }, t.reason));
  card.append(h("div", { class: "tool-label" }, "Arguments"), h("pre", { class: "tool-args" }, JSON.stringify(t.arguments ?? {}, null, 2) + (t.edited ? "\n(edited by you)" : "")));
  if (!t.pending && (t.result || t.error)) {
    card.append(h("div", { class: "tool-label" }, t.ok ? "Result" : "Error"), h("pre", { class: "tool-result " + (t.ok ? "ok" : "failed") }, t.ok ? t.result ?? "" : t.error ?? t.result ?? ""));
  }
  for (const m of t.ok ? t.media ?? [] : []) {
    const el = mediaElement(m);
    if (el) card.append(el);
  }
  if (t.redacted) card.append(h("div", { class: "hint tool-redacted" }, "Secrets were removed from this result (shown as [redacted]) before it was saved or sent to the model."));
  return card;
}
