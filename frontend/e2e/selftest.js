// The in-window end-to-end self-test, run by the e2e build (internal/e2e) on
// DOM ready. It drives the real UI like a user and reports to window.go.e2e.E2E.
(async () => {
  const E = window.go.e2e.E2E;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const frames = (n) => new Promise((r) => { const f = () => (n-- <= 0 ? r() : requestAnimationFrame(f)); requestAnimationFrame(f); });
  // The dark palette's variables (the window follows the system's scheme;
  // set on the root element, they show the dark one for a screenshot).
  const darkVars = () => {
    const dark = [];
    for (const sh of Array.from(document.styleSheets)) for (const r of Array.from(sh.cssRules)) {
      if (r.media && /dark/.test(r.media.mediaText)) for (const inner of Array.from(r.cssRules)) if (inner.selectorText === ":root") for (const k of Array.from(inner.style)) dark.push([k, inner.style.getPropertyValue(k)]);
    }
    return dark;
  };
  // shootDark takes the screenshot name-dark of what the window shows now, in the dark palette.
  const shootDark = async (name) => {
    const dark = darkVars();
    for (const [k, v] of dark) document.documentElement.style.setProperty(k, v);
    await frames(2);
    await E.Screenshot(name + "-dark");
    for (const [k] of dark) document.documentElement.style.removeProperty(k);
    await frames(2);
  };
  const $ = (s) => document.querySelector(s);
  // shootSizes takes name-720 and name-1920, light and dark, then gives the window its size back.
  const shootSizes = async (name) => {
    const [w0, h0] = [window.outerWidth, window.outerHeight];
    for (const [w, hgt] of [[720, 800], [1920, 1040]]) {
      await E.Resize(w, hgt);
      await sleep(400);
      await frames(3);
      await E.Screenshot(`${name}-${w}`);
      await shootDark(`${name}-${w}`);
    }
    await E.Resize(w0, h0);
    await sleep(300);
  };
  const $$ = (s) => Array.from(document.querySelectorAll(s));
  const log = (m) => E.Log(m);
  async function waitFor(fn, what, ms = 20000) {
    const t0 = Date.now();
    for (;;) {
      let v;
      try { v = fn(); } catch (e) { v = undefined; }
      if (v) return v;
      if (Date.now() - t0 > ms) throw new Error("timed out waiting for " + what);
      await sleep(50);
    }
  }
  function assert(cond, msg) { if (!cond) throw new Error("assertion failed: " + msg); }
  let prompts = 0;
  window.runtime.EventsOn("tool:prompt", () => { prompts++; });

  // Types text and presses Enter, as a user would.
  async function say(text) {
    const input = $("#input");
    input.focus();
    input.value = text;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
  }
  const assistants = () => $$("#messages .msg.assistant");
  const lastAssistantDone = (needle) => {
    const a = assistants().filter((x) => !x.classList.contains("streaming") && x.textContent.includes(needle));
    return a[a.length - 1];
  };

  try {
    // First paint: the browser's paint timing, on the same clock as the
    // process start (epoch ms), else the first frame after DOM ready.
    await frames(2);
    const paint = performance.getEntriesByType("paint");
    const fcp = paint.find((e) => e.name === "first-contentful-paint") || paint[0];
    await E.MarkAt("first-paint", performance.timeOrigin + (fcp ? fcp.startTime : performance.now()), fcp ? fcp.name : "frame after DOM ready");
    await waitFor(() => document.body.dataset.ready === "1", "the app to load");
    await sleep(1500);
    const idleMB = await E.MemoryMB();
    const idleRSSMB = await E.RSSMB();
    log(`ready; idle memory ${idleMB.toFixed(0)} MB PSS, ${idleRSSMB.toFixed(0)} MB RSS: ${await E.MemoryBreakdown()}`);
    // The page runs without JavaScriptCore's JIT and with two malloc
    // arenas (internal/webkit/lean_linux.go).
    await E.CheckWebProcessEnv();

    // Restart phase (scripts/e2e.sh starts the app a second time on the same
    // data and config): the provider saved through the setup form is there.
    if ((await E.Phase()) === "restart") {
      await sleep(1000);
      assert($("#setup").hidden, "no setup form after a restart: the provider was saved");
      const pi = await window.go.app.App.Providers();
      const cur = pi.providers["openai-compatible"] || {};
      assert(pi.configured && pi.defaultProvider === "openai-compatible" && cur.model === "scripted" && /^http:\/\/127\.0\.0\.1:\d+\/v1$/.test(cur.baseUrl || ""), "the saved provider came back: " + JSON.stringify(pi));
      await frames(2);
      await E.Screenshot("restart");
      log("setup saved across a restart: " + pi.defaultProvider + " " + cur.baseUrl + " " + cur.model);
      // The conversation of 7b tells the truth after the restart.
      const lake = await waitFor(() => $$("#agents .session").find((x) => x.querySelector(".session-title")?.textContent === "Pack for the lake trip"), "the lake trip conversation in the list");
      lake.click();
      const denied = await waitFor(() => $('.tool-card[data-tool="write_file"][data-decision="denied"]'), "the denied badge on the write_file card after a restart");
      assert(denied.querySelector('.badge[class*="risk-"]') && /user/.test(denied.querySelector(".badges").textContent), "the card has its risk and who decided back: " + denied.querySelector(".badges").textContent);
      await waitFor(() => $$("#messages .msg.stopped").some((x) => x.textContent.includes("Stopped.")), "Stopped. after a restart");
      const errs = $$("#messages .msg.error");
      assert(errs.length === 1 && !/JARVIS_|config\.json/.test(errs[0].textContent), "the error line after a restart, once, in plain words: " + errs.map((x) => x.textContent));
      const users = $$("#messages .msg.user .msg-text").map((x) => x.textContent);
      assert(users.filter((t) => t.includes("Check the weather")).length === 1 && users.filter((t) => t.includes("two nights")).length === 1, "each message once after a restart: " + JSON.stringify(users));
      assert($('#messages .msg.user .versions[data-versions="3/3"]'), "the edited message's versions after a restart");
      const exp = await window.go.app.App.Reload($(".session.current").dataset.session);
      assert(exp.messages.some((m) => m.role === "status" && /Stopped/.test(m.text)), "the stored Stopped line");
      log("after a restart: denied badge, Stopped., one error, each message once, versions 3/3");
      // Screenshots of the changed screens, light and dark, narrow and wide.
      for (const [w, hgt] of [[720, 800], [1920, 1040]]) {
        await E.Resize(w, hgt);
        await sleep(400);
        await frames(3);
        await E.Screenshot(`conversation-${w}`);
        await shootDark(`conversation-${w}`);
        if (w === 720) {
          // The sidebar folded away (Ctrl+B), then back.
          $("#sidebar-toggle").click();
          await frames(3);
          assert($("#shell").classList.contains("sidebar-collapsed"), "the sidebar folds away");
          await E.Screenshot("conversation-720-collapsed");
          $("#sidebar-toggle").click();
          await frames(2);
        }
        $("#session-filter").value = "lake";
        $("#session-filter").dispatchEvent(new Event("input"));
        await waitFor(() => $(".session-snippet mark"), "a search snippet with the words marked");
        $(".session.current [data-action=more]").click();
        await frames(2);
        await E.Screenshot(`search-${w}`);
        await shootDark(`search-${w}`);
        $(".session.current [data-action=more]").click();
        $("#session-filter").value = "";
        $("#session-filter").dispatchEvent(new Event("input"));
      }
      E.Done(true, "restart checks passed");
      return;
    }

    // The scheduled-tasks scenario (scripts/e2e.sh, on a data dir of its
    // own; the model is openai-peer -weekday-notes): the user asks for a
    // weekday task in the conversation and allows it; the window closes, a
    // headless Jarvis runs the missed occurrence and its write of today's
    // note waits in the Inbox; the window opens again (phase tasks-inbox),
    // the approval is given there and the result comes.
    const phase = await E.Phase();
    if (phase === "tasks") {
      assert($("#setup").hidden, "no setup form: the model is configured");
      await say("every weekday at 8:00, summarise yesterday's notes into today's note");
      await waitFor(() => !$("#prompt").hidden, "the prompt to schedule the task", 60000);
      const shown = $("#prompt").innerText;
      assert(shown.includes("every weekday (Monday to Friday) at 8:00 (Europe/Berlin)"), "the prompt says when in words: " + shown);
      assert(shown.includes("read files in the workspace, write files in the workspace; nothing else"), "the prompt says which tools in words: " + shown);
      assert($("#prompt-title").textContent === "Schedule the task \u201cDaily note\u201d?" && /also while you are away/.test($("#prompt-desc").textContent), "the prompt asks in words: " + $("#prompt-title").textContent + " / " + $("#prompt-desc").textContent);
      await frames(2);
      await E.Screenshot("task-prompt");
      $('#prompt button[data-choice="once"]').click();
      await waitFor(() => $("#prompt").hidden, "the prompt to close after Allow");
      await waitFor(() => lastAssistantDone("Done:"), "the answer once the task is scheduled", 60000);
      $("#open-inbox").click();
      const task = await waitFor(() => $$("#inbox .task-list .task").find((t) => t.textContent.includes("Daily note")), "the task in the window's task list", 30000);
      assert(/every weekday \(Monday to Friday\) at 8:00/.test(task.textContent) && /next /.test(task.textContent), "the task list says when and the next run: " + task.textContent);
      assert(/read files in the workspace, write files in the workspace/.test(task.textContent), "the task list says its tools in words: " + task.textContent);
      await frames(2);
      await E.Screenshot("task-list");
      log("task scheduled from the conversation: " + task.textContent);
      E.Done(true, "tasks phase passed: the task was asked for, allowed and listed");
      return;
    }
    if (phase === "tasks-inbox") {
      const day = await E.TaskDay();
      assert(/^\d{4}-\d{2}-\d{2}$/.test(day), "the task's day is known: " + day);
      const note = `notes/${day}.md`;
      const inboxBtn = await waitFor(() => $("#open-inbox"), "the Inbox button");
      await waitFor(() => /^Inbox \([1-9]\d*\)$/.test(inboxBtn.textContent), "the Inbox's unread count in the sidebar", 30000);
      log("sidebar: " + inboxBtn.textContent);
      inboxBtn.click();
      const ap = await waitFor(() => $("#inbox .inbox-item.kind-approval.state-pending"), "the approval waiting in the Inbox", 30000);
      assert(ap.textContent.includes("Daily note") && ap.textContent.includes(note), "the approval names the task and today's note: " + ap.textContent);
      const before = await E.WorkspaceFile(note).then(() => true, () => false);
      assert(!before, "today's note is not written before the approval");
      await frames(2);
      await E.Screenshot("inbox-approval");
      ap.querySelector('[data-action="allow"]').click();
      await waitFor(() => !$("#notice").hidden && /Allowed/.test($("#notice").textContent), "the Allowed notice");
      const result = await waitFor(() => $$("#inbox .inbox-item.kind-result").find((x) => x.textContent.includes("Today's note has yesterday's summary")), "the run's result in the Inbox after Allow", 90000);
      assert(result.textContent.includes("Daily note") && result.textContent.includes(note), "the result names the task and today's note: " + result.textContent);
      await waitFor(() => $$("#inbox .inbox-item.kind-approval").some((x) => x.classList.contains("state-allowed")), "the approval shown as allowed");
      const written = await E.WorkspaceFile(note);
      assert(/^Summary of \w+day: walked, planned the week\.\n$/.test(written), "today's note holds the summary: " + JSON.stringify(written));
      await frames(2);
      await E.Screenshot("inbox-result");
      result.querySelector('[data-action="open"]').click();
      const answer = await waitFor(() => lastAssistantDone("Today's note has yesterday's summary"), "the run's answer in its conversation", 30000);
      assert(answer.textContent.includes(note), "the run's conversation shows the summary answer: " + answer.textContent);
      await waitFor(() => $('.tool-card[data-tool="write_file"]') && $$("#messages .msg.user").some((x) => x.textContent.includes("Summarise yesterday's notes")), "the run's prompt and its write_file card in its conversation");
      // It went on from the allowed call (service/resume.go), and says so.
      const run = await window.go.app.App.Reload($(".session.current").dataset.session);
      assert(run.messages.some((m) => m.role === "status" && /^Resumed: the call that waited for approval was allowed/.test(m.text)), "the run went on from the allowed call (its Resumed line)");
      await waitFor(() => $$("#messages .msg.status").some((x) => /^Resumed: the call that waited for approval was allowed/.test(x.textContent)), "the Resumed line in the run's conversation in the window (it went on live there)", 10000);
      // The run's conversation, followed since the window started (its call was gated here), is live in the header.
      await waitFor(() => $("#conn").dataset.state === "live", "the header to say Live for the opened run (it said " + $("#conn").textContent + ")", 10000);
      // Where the headless Jarvis stopped, a plain line says the run waited (no error, no Retry).
      assert($$("#messages .msg.status").some((x) => /^Jarvis stopped while this run waited for your approval/.test(x.textContent)), "the line where the run stopped with Jarvis");
      assert(!$$("#messages .msg.error").length, "an error line in the run's conversation: " + $$("#messages .msg.error").map((x) => x.textContent).join(" | "));
      // Answered and opened, nothing is left unread.
      await waitFor(() => $("#open-inbox").textContent === "Inbox", "no unread item left once the approval is answered and the result opened", 30000);
      await sleep(600); // the opened conversation's entrance, for the picture
      await frames(2);
      await E.Screenshot("task-run");
      log(`Inbox: approval allowed, result opened, ${note} written`);
      E.Done(true, "tasks-inbox phase passed: approval allowed in the Inbox, result and today's note there");
      return;
    }

    // 0. First run: no provider. The setup form is open; type the
    // scripted upstream's base URL and a model, save, and the agent is ok.
    await waitFor(() => !$("#setup").hidden, "the setup form on first run");
    const gdot = () => $('.agent-group[data-agent="general"] .status-dot');
    assert(gdot()?.classList.contains("unconfigured"), "the general agent starts unconfigured");
    await waitFor(() => !/Looking for/.test($("#setup-discovered").textContent), "the local server discovery");
    // The first-run screen says in plain words what Jarvis needs; it offers
    // a local server found on the usual ports, else asks for an API key.
    const intro = $("#setup-intro");
    assert(!intro.hidden && /needs a language model/.test(intro.textContent), "the first-run explanation is shown: " + intro.textContent);
    if ($$("#setup-discovered .discovered-server").length) {
      assert(/is running on this computer/.test(intro.textContent), "a found local server is offered by name");
    } else {
      assert(/No model server is running on this computer/.test(intro.textContent), "the explanation says no local server was found");
      assert(!$("#setup-openai").hidden && $("#setup-compatible").hidden, "the API key form is offered when no local server runs");
    }
    // No model yet: a message is not sent; the window says to set one up.
    await say("hello before setup");
    await waitFor(() => !$("#notice").hidden && /Set up a model/.test($("#notice").textContent), "the Set up a model notice");
    assert($$("#messages .msg.user").length === 0 && $$("#agents .session").length === 0 && $("#input").value === "hello before setup", "nothing was sent and the words stay in the box");
    assert($("#conn").dataset.state !== "live" && !/JARVIS_|config\.json/.test(document.body.innerText), "no green Live, no variable or config key: " + $("#conn").textContent);
    $("#input").value = "";
    await frames(2);
    await E.Screenshot("first-run");
    await shootDark("first-run");
    log("first-run screen: " + intro.textContent);
    // This run's session bus has no unlocked keyring: an OpenAI key goes to
    // the 0600 file next to the config, and the window says it is less protected.
    $('#setup [data-tab="openai"]').click();
    $("#setup-apikey").value = "sk-e2e-not-a-real-key";
    $("#setup-openai").dispatchEvent(new Event("submit", { cancelable: true }));
    await waitFor(() => !$("#notice").hidden && /less protected than a keyring/.test($("#notice").textContent), "the keyring-less warning after saving a key");
    assert($("#setup-apikey").value === "", "the key is not kept in the page");
    log("keyring-less key storage: " + $("#notice").textContent);
    $("#open-setup").click();
    await waitFor(() => !$("#setup").hidden && $("#setup-key-hint").classList.contains("warn"), "the setup form's warning about the key file");
    $('#setup [data-tab="compatible"]').click();
    $("#setup-baseurl").value = await E.PeerURL();
    $("#setup-model").value = "scripted";
    // Test connection asks the server for its models and answers in words
    // (the scripted peer lists only "test-model"; it answers any model).
    $('#setup-compatible [data-action="test-connection"]').click();
    const tested = await waitFor(() => { const r = $("#setup-test-result"); return !r.hidden && r.textContent !== "Testing…" && r.textContent; }, "the Test connection result");
    assert(tested.startsWith("Reached the server at " + $("#setup-baseurl").value) && tested.includes('has no model "scripted". It has test-model.'), "Test connection reached the peer and named its models: " + tested);
    log("Test connection: " + tested);
    await frames(2);
    await E.Screenshot("setup");
    $("#setup-compatible").dispatchEvent(new Event("submit", { cancelable: true }));
    await waitFor(() => $("#setup").hidden, "the setup form to close after saving");
    await waitFor(() => gdot()?.classList.contains("ok"), "the general agent's status to turn ok");
    log("provider configured through the setup form");

    // About: version, commit, folders; start at login writes and removes
    // the XDG autostart entry.
    $("#open-about").click();
    await waitFor(() => !$("#about").hidden && $('[data-about="Version"]'), "the About view");
    const about = (k) => $(`[data-about="${k}"]`).textContent;
    assert(/^\d+\.\d+\.\d+/.test(about("Version")) && about("Commit") !== "", "About shows the version and commit: " + about("Version") + " " + about("Commit"));
    assert(/\/jarvis$/.test(about("Data folder")) && /\.json$/.test(about("Config file")), "About shows the data folder and config file");
    assert(!$("#about-autostart").checked, "start at login is off until asked");
    $("#about-autostart").click();
    for (let i = 0; i < 60 && !(await window.go.app.App.About()).autostart; i++) await sleep(50);
    assert((await window.go.app.App.About()).autostart, "the autostart entry is written when turned on");
    await frames(2);
    await E.Screenshot("about");
    $("#about-autostart").click();
    for (let i = 0; i < 60 && (await window.go.app.App.About()).autostart; i++) await sleep(50);
    assert(!(await window.go.app.App.About()).autostart, "the autostart entry is removed when turned off");
    $("#open-about").click();
    log("About view and start-at-login checked");

    // Memory: how notes are found, in words (no embedding model runs here).
    $("#open-memory").click();
    await waitFor(() => !$("#memory-view").hidden && $('[data-memory="retrieval"]'), "the Memory view");
    assert(/^By their words/.test($('[data-memory="retrieval"]').textContent), "Memory says it finds notes by their words: " + $('[data-memory="retrieval"]').textContent);
    await frames(2);
    await E.Screenshot("memory");
    $("#open-memory").click();
    log("Memory view says how notes are found");

    // Shift+Enter must not send.
    const input = $("#input");
    input.value = "draft";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", shiftKey: true, bubbles: true, cancelable: true }));
    assert(input.value === "draft" && $$("#messages .msg.user").length === 0, "Shift+Enter kept the draft");

    // 1. A streamed answer from the scripted upstream.
    await say("Hello Jarvis, how are you today?");
    await waitFor(() => $("#conn")?.dataset.state === "live", "the stream to be live");
    const hello = await waitFor(() => lastAssistantDone("You said: Hello Jarvis, how are you today?"), "the streamed answer");
    assert($$("#messages .msg.user").length === 1, "one user message (no duplicate echo)");
    assert((hello.textContent.match(/You said/g) || []).length === 1, "the answer's text appears once");
    assert($$("#agents .session").length >= 1, "the new session is listed");
    log("streamed answer ok");

    // 2. A risky tool call prompts, is allowed, runs, and is audited.
    await say('Please save a note [[tool write_file {"path":"e2e-note.txt","content":"hello from the e2e run"}]]');
    await waitFor(() => !$("#prompt").hidden, "the permission prompt");
    assert($("#prompt-title").textContent === "Write the file e2e-note.txt?" && $("#prompt-desc").textContent.startsWith("Jarvis will create e2e-note.txt with 1 line of text"), "prompt says in words what it does: " + $("#prompt-title").textContent + " / " + $("#prompt-desc").textContent);
    assert(!/write_file|is risky|\{/.test(["#prompt-title", "#prompt-desc", "#prompt-meta", "#prompt-reason", "#prompt-requested"].map((s) => $(s).textContent).join(" ")), "no developer text in the prompt: " + $("#prompt-meta").textContent + " / " + $("#prompt-reason").textContent);
    assert(document.activeElement?.dataset.choice === "deny", "the focus starts on Deny for a risky call, not on an approval");
    assert($("#prompt-preview pre").textContent === "hello from the e2e run", "the prompt shows the content to be written as text");
    assert($("#prompt-where").textContent.includes("/e2e-note.txt"), "the prompt shows the full path: " + $("#prompt-where").textContent);
    assert($("#prompt-args").value.includes("e2e-note.txt"), "prompt shows the arguments");
    assert($("#prompt-decisive dd").textContent === "e2e-note.txt", "prompt shows the path first: " + $("#prompt-decisive").textContent);
    const deny = $('#prompt button[data-choice="deny"]');
    assert(getComputedStyle(deny).outlineStyle === "solid", "the focus ring on Deny shows from the first frame: outline " + getComputedStyle(deny).outlineStyle);
    await frames(2);
    await E.Screenshot("prompt");
    await shootDark("prompt");
    await shootSizes("prompt");
    $('#prompt button[data-choice="once"]').click();
    await waitFor(() => $("#prompt").hidden, "the prompt to close");
    await waitFor(() => $('.tool-card[data-decision="allowed"]'), "the allowed tool card");
    await waitFor(() => lastAssistantDone("Tool results:"), "the answer after the tool result");
    const note = await E.WorkspaceFile("e2e-note.txt");
    assert(note === "hello from the e2e run", "the tool wrote the file, got " + JSON.stringify(note));
    let a = await E.Audit("write_file");
    assert(a.entries.length === 1 && a.entries[0].decision === "allowed" && a.entries[0].decidedBy === "user", "audit has the allowed write_file: " + JSON.stringify(a.entries));
    assert(a.verify.ok !== false, "the audit chain verifies: " + JSON.stringify(a.verify));
    log("risky tool allowed, run and audited");

    // 2b. The audit panel shows the row; detail, verify and export work.
    $("#open-audit").click();
    const row = await waitFor(() => $('#audit-list tr.audit-row[data-tool="write_file"]'), "the write_file row in the audit panel");
    row.click();
    await waitFor(() => $("#audit-detail").textContent.includes("e2e-note.txt"), "the row's arguments in the detail");
    assert(/[0-9a-f]{64}/.test($("#audit-detail").textContent), "the detail shows the hash");
    $("#audit-verify").click();
    await waitFor(() => /Chain OK/.test($("#audit-status").textContent), "the chain to verify");
    const verified = $("#audit-status").textContent;
    $("#audit-export").click();
    await waitFor(() => /Exported 1 row/.test($("#audit-status").textContent), "the export path");
    log("audit panel: " + verified + "; " + $("#audit-status").textContent);
    $("#audit-status").textContent = verified + " — " + $("#audit-status").textContent;
    await frames(2);
    await E.Screenshot("audit");
    $("#audit-close").click();

    // 2c. A tool the service runs itself shows as a card without a prompt.
    const promptsBefore = prompts;
    await say('Remember this [[tool memory_write {"target":"daily","content":"The e2e run wrote this note."}]]');
    await waitFor(() => $('.tool-card.service[data-tool="memory_write"]'), "the service tool card");
    await waitFor(() => lastAssistantDone("Tool results:") && assistants().length >= 3, "the answer after the service tool");
    assert(prompts === promptsBefore && $("#prompt").hidden, "no prompt for a service tool");
    log("service tool card shown");

    // 3. A forbidden call (a path outside the workspace) is denied without a prompt.
    const before = prompts;
    await say('Read this [[tool read_file {"path":"../../../etc/passwd"}]]');
    await waitFor(() => $$('.tool-card[data-decision="denied"]').length >= 1, "the denied tool card");
    await waitFor(() => lastAssistantDone("Tool results:") && assistants().length >= 4, "the answer after the denial");
    assert(prompts === before, "no prompt for a forbidden call");
    a = await E.Audit("read_file");
    assert(a.entries.length === 1 && a.entries[0].decision === "denied" && a.entries[0].class === "forbidden", "audit has the denied read_file: " + JSON.stringify(a.entries));
    log("forbidden tool denied without a prompt");

    // 3b. Enter on a risky prompt denies; "Always allow" saves a rule for
    // that file only, shown before saving, listed on the Permissions page,
    // and revoked there. The view follows the end after the tool cards.
    const deniedBefore = $$('.tool-card[data-decision="denied"]').length;
    await say('Overwrite it [[tool write_file {"path":"e2e-enter.txt","content":"must not be written"}]]');
    await waitFor(() => !$("#prompt").hidden && $("#prompt-title").textContent.includes("e2e-enter.txt"), "the prompt for e2e-enter.txt");
    document.activeElement.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    await waitFor(() => $("#prompt").hidden, "the prompt to close on Enter");
    await waitFor(() => $$('.tool-card[data-decision="denied"]').length > deniedBefore, "the denied card after Enter");
    assert(!(await E.WorkspaceFile("e2e-enter.txt").catch(() => "")), "Enter denied: the file was not written");
    log("Enter on a risky prompt denied it");

    await say('Keep a list [[tool write_file {"path":"e2e-always.txt","content":"one"}]]');
    await waitFor(() => !$("#prompt").hidden && $("#prompt-title").textContent.includes("e2e-always.txt"), "the prompt for e2e-always.txt");
    const scopeSel = $("#prompt-scope select");
    assert(scopeSel && scopeSel.options[scopeSel.selectedIndex].textContent === "only the file e2e-always.txt", "Always allow is scoped to the file, shown before saving: " + $("#prompt-scope").textContent);
    await frames(2);
    await E.Screenshot("prompt-scope");
    $('#prompt button[data-choice="always"]').click();
    await waitFor(() => $("#prompt").hidden, "the prompt to close after Always allow");
    await waitFor(() => $$('.tool-card[data-decision="allowed"]').length >= 2, "the second allowed card");
    await waitFor(() => $("#stop").hidden, "the turn after the second allowed card to end"); // else the next message finds it busy
    const rules = await window.go.app.App.PermissionRules();
    // Besides the default rules for credential stores (each with its note), one rule: that file.
    const mine = rules.rules.filter((r) => !r.note);
    const mineAt = rules.rules.findIndex((r) => !r.note);
    assert(mine.length === 1 && mine[0].args?.path === "e2e-always.txt", "the saved rule covers that file only: " + JSON.stringify(mine));
    await say('Another file [[tool write_file {"path":"e2e-other.txt","content":"x"}]]');
    await waitFor(() => !$("#prompt").hidden && $("#prompt-title").textContent.includes("e2e-other.txt"), "a prompt for another file: the rule does not cover it");
    // Deny with a reason: Enter in "Tell the agent why" denies and sends it.
    $("#prompt-why").value = "not that file; keep e2e-always.txt";
    $("#prompt-why").dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    await waitFor(() => $("#prompt").hidden, "the prompt to close");
    const other = await window.go.app.App.AuditList({ tool: "write_file", limit: 50 });
    assert(other.entries.some((e) => e.decision === "denied" && /the user said: not that file; keep e2e-always.txt/.test(e.reason)), "the denial's reason is in the audit row: " + JSON.stringify(other.entries.map((e) => e.reason)));
    const box = $("#messages");
    await waitFor(() => lastAssistantDone("Tool results:") && box.scrollHeight - box.scrollTop - box.clientHeight < 80, "the view to follow the end after the tool cards");
    $("#open-permissions").click();
    const prow = await waitFor(() => $(`#permissions .permission-row[data-index="${mineAt}"]`), "the rule on the Permissions page");
    assert(prow.textContent.includes("e2e-always.txt"), "the page lists the rule in words: " + prow.textContent);
    assert(/Saved with “Always allow” in “/.test(prow.querySelector(".permission-origin").textContent), "the rule says where it came from: " + prow.textContent);
    assert($("#permissions").contains(document.activeElement), "the focus is inside the Permissions dialog");
    await shootSizes("permissions");
    await frames(2);
    await E.Screenshot("permissions");
    // The same page in the dark palette (the window follows the system's).
    const dark = darkVars();
    for (const [k, v] of dark) document.documentElement.style.setProperty(k, v);
    await frames(2);
    await E.Screenshot("permissions-dark");
    $("#permissions").hidden = true;
    // A rich reply (the scripted model echoes the Markdown it is sent), dark and light.
    await say("a rich reply:\n\n## Plan\n\nSome **bold** and `inline code`, then a list:\n\n1. first\n2. second\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\n| name | size |\n|:-----|-----:|\n| a.txt | 12 |\n| b.txt | 3400 |");
    const rich = await waitFor(() => lastAssistantDone("a rich reply"), "the rich reply");
    await frames(3);
    assert(box.scrollHeight - box.scrollTop - box.clientHeight < 80, "the view followed the rich reply to its end");
    rich.scrollIntoView({ block: "start" });
    await frames(3);
    await E.Screenshot("rich-reply-dark");
    for (const [k] of dark) document.documentElement.style.removeProperty(k);
    await frames(3);
    await E.Screenshot("rich-reply");
    $("#open-permissions").click();
    $(`#permissions .permission-row[data-index="${mineAt}"] [data-action="revoke"]`).click();
    await waitFor(() => !$$("#permissions .permission-row").some((r) => r.textContent.includes("e2e-always.txt")), "the revoked rule to leave the page");
    assert(!(await window.go.app.App.PermissionRules()).rules.some((r) => !r.note), "the rule is revoked in the gate");
    $("#permissions").hidden = true;
    log("scoped Always allow rule shown, listed and revoked; the view followed the end");

    // 3b. A scripted model edits a file; the transcript shows the change and the UI undoes it.
    await say('Change the note [[tool edit_file {"path":"e2e-note.txt","old_string":"hello","new_string":"goodbye"}]]');
    await waitFor(() => !$("#prompt").hidden, "the edit_file prompt");
    assert($("#prompt-title").textContent.includes("Edit the file e2e-note.txt"), "the prompt says it edits e2e-note.txt: " + $("#prompt-title").textContent);
    $('#prompt button[data-choice="once"]').click();
    await waitFor(() => $("#prompt").hidden, "the prompt to close");
    for (let i = 0; i < 100 && (await E.WorkspaceFile("e2e-note.txt")) !== "goodbye from the e2e run"; i++) await sleep(50);
    assert((await E.WorkspaceFile("e2e-note.txt")) === "goodbye from the e2e run", "edit_file changed the note");
    const changes = await waitFor(() => {
      const all = $$("#messages .turn-changes");
      const last = all[all.length - 1];
      // The write_file turn's block (the note "created") comes first; this turn's says "changed".
      return last && last.querySelector('li[data-path="e2e-note.txt"] .hint')?.textContent === "changed" && last.textContent.includes("1 file changed") ? last : null;
    }, "the turn's \"1 file changed\" block");
    changes.querySelector('li[data-path="e2e-note.txt"] [data-undo="diff"]').click();
    const diff = await waitFor(() => changes.querySelector("pre.undo-diff"), "the diff view");
    assert(diff.textContent.includes("- hello from the e2e run") && diff.textContent.includes("+ goodbye from the e2e run"), "the diff shows both lines: " + diff.textContent);
    await frames(2);
    changes.scrollIntoView({ block: "center" });
    await frames(2);
    await E.Screenshot("undo");
    changes.querySelector('[data-undo="turn"]').click();
    await waitFor(() => /Restored 1 file/.test(changes.textContent) || /undone/.test($$("#messages .turn-changes").pop()?.textContent || ""), "the undo to finish");
    assert((await E.WorkspaceFile("e2e-note.txt")) === "hello from the e2e run", "undo restored the note, got " + JSON.stringify(await E.WorkspaceFile("e2e-note.txt")));
    a = await E.Audit("undo");
    assert(a.entries.length === 1 && a.entries[0].decision === "allowed", "audit has the undo: " + JSON.stringify(a.entries));
    assert(a.verify.ok !== false, "the audit chain verifies after the undo");
    log("file edit shown with its diff and undone from the transcript");

    // 4. HTML and script in a reply are shown inert.
    window.__pwned = undefined;
    await say('Render this: <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> <a href="javascript:window.__pwned=3">link</a> **bold**');
    const xss = await waitFor(() => lastAssistantDone("Render this"), "the echoed HTML reply");
    await sleep(300);
    assert(!xss.querySelector("img,script,iframe,svg"), "no img/script element in the reply: " + xss.innerHTML);
    assert(!/onerror|javascript:/i.test(xss.innerHTML), "no handler or javascript: URL survives: " + xss.innerHTML);
    assert(xss.querySelector("strong")?.textContent === "bold", "Markdown still renders");
    const link = xss.querySelector("a");
    if (link) link.click();
    await sleep(100);
    assert(window.__pwned === undefined, "nothing ran (window.__pwned=" + window.__pwned + ")");
    log("HTML in a reply is inert");

    // 4b. Complete replies are parsed in the worker (allowed by the CSP);
    // pathological ones are shown as plain text and stop nothing.
    const w1 = await window.jarvisBench.offThread("**parsed** off the thread");
    assert(/<strong>parsed<\/strong>/.test(w1.html) && !w1.unavailable && w1.abandoned === 0, "the parsing worker runs in the window: " + JSON.stringify(w1));
    const w2 = await window.jarvisBench.offThread(">".repeat(20000) + " x");
    assert(w2.html.includes("plain-reply") && !w2.unavailable, "20,000 quote markers are shown as plain text: " + JSON.stringify(w2).slice(0, 200));
    const w3 = await window.jarvisBench.offThread("[a](".repeat(4000));
    assert(w3.html.includes("plain-reply"), "repeated [a]( is shown as plain text");
    log("parsing worker: rendered in the worker, pathological replies plain");

    // 5. Stop ends a running turn.
    await say("Count slowly [[slow 150]] [[deltas 60]]");
    await waitFor(() => !$("#stop").hidden && assistants().some((x) => x.classList.contains("streaming")), "a streaming turn with a stop button");
    $("#stop").click();
    const stoppedLine = await waitFor(() => $$("#messages .msg.stopped").find((x) => x.querySelector(".msg-text")?.textContent === "Stopped."), "the stopped line (a state, not an error)");
    assert(stoppedLine.querySelector('[data-action="continue"]'), "a stopped turn offers Continue");
    await waitFor(() => $("#stop").hidden, "the stop button to hide");
    log("stop cancelled the turn");
    await frames(2);
    await E.Screenshot("conversation");

    // 6. An external agent: attach by ID, "Sent to external agent", an inert reply.
    const ext = $('.agent-group[data-agent="ext"]');
    if (ext) try {
      ext.querySelector('button[data-action="attach"]').click();
      const form = await waitFor(() => $('.agent-group[data-agent="ext"] .attach-form'), "the attach form");
      form.querySelector("input").value = "bad id!";
      form.dispatchEvent(new Event("submit", { cancelable: true }));
      await waitFor(() => form.querySelector(".form-error").textContent, "a validation message");
      form.querySelector("input").value = "E2E-EXT-1";
      form.dispatchEvent(new Event("submit", { cancelable: true }));
      await waitFor(() => $('.session.current[data-session="E2E-EXT-1"]'), "the attached session to open");
      window.__pwned = undefined;
      await say("ping external");
      const outcome = await waitFor(() => lastAssistantDone("External reply to") || $$("#messages .msg.error").find((x) => /does not run|not supported/i.test(x.textContent)), "the external reply", 15000);
      if (outcome.classList.contains("error")) {
        // The service's external runtime is not there yet: the error line is
        // what the user sees, and it replaced the status line.
        log("external runtime not available in this service (" + outcome.textContent + "): reply check skipped");
        await E.Screenshot("external");
        throw { skip: true };
      }
      const reply = outcome;
      await sleep(300);
      assert(!reply.querySelector("img,script"), "external reply is inert: " + reply.innerHTML);
      assert(window.__pwned === undefined, "external reply ran nothing");
      assert(!$$("#messages .msg.status").some((x) => /sent to external agent/i.test(x.textContent)), "the status line was replaced by the reply");
      assert(E.ExternalHits ? (await E.ExternalHits()) >= 1 : true, "the external agent was called");
      log("external agent flow ok");
      await frames(2);
      await E.Screenshot("external");
    } catch (e) {
      if (!e || !e.skip) throw e;
    } else {
      log("no external agent listed by the service: external flow skipped");
    }

    // 6b. A proxy agent's Test action shows the agent's report.
    const px = $('.agent-group[data-agent="px"]');
    assert(px, "the proxy agent is listed");
    px.querySelector('button[data-action="test"]').click();
    await waitFor(() => !$("#agent-test").hidden, "the test dialog");
    $("#agent-test-text").value = "ping from e2e";
    $("#agent-test-form").dispatchEvent(new Event("submit", { cancelable: true }));
    const rep = await waitFor(() => $("#agent-test-report .test-report"), "the test report", 15000);
    assert(rep.dataset.ok === "1", "the proxy test passed: " + rep.textContent);
    assert(rep.textContent.includes("HTTP 200") && rep.textContent.includes("ping from e2e"), "report shows status and output: " + rep.textContent);
    assert(!rep.querySelector("img"), "the proxy output is inert");
    await frames(2);
    await E.Screenshot("agent-test");
    $("#agent-test-close").click();
    log("proxy agent test ok");

    // 6c. A round table: live progress, then the laid-out result.
    const council = $('.agent-group[data-agent="council"]');
    assert(council, "the round-table agent is listed");
    council.querySelector('button[data-action="new"]').click();
    await waitFor(() => $(".session.current") && $("#messages .empty"), "the council session");
    window.__pwned = undefined;
    await say("Review this handler: query = \"SELECT * FROM users WHERE id=\" + id, run in a loop per row");
    await waitFor(() => $(".rt-card.rt-progress .rt-answered") && $(".rt-card.rt-progress .rt-waiting"), "the round-table progress card with answers and waits", 20000);
    await frames(2);
    await E.Screenshot("roundtable-progress");
    const rtc = await waitFor(() => $(".rt-card.rt-result"), "the round-table result card", 60000);
    await sleep(300);
    assert(rtc.querySelector(".rt-direction"), "a recommended direction");
    assert(rtc.querySelectorAll(".rt-finding").length >= 1, "key findings");
    assert(rtc.querySelectorAll(".rt-vote").length === 2 && rtc.querySelector(".rt-vote.dissent"), "two votes, one dissent");
    assert(!rtc.querySelector("img,script"), "agent strings are inert: " + rtc.innerHTML.slice(0, 400));
    assert(window.__pwned === undefined, "the round table ran nothing");
    assert($$("#messages .msg.assistant").every((x) => !x.textContent.includes("Recommended direction")), "the Markdown result is not shown twice");
    rtc.scrollIntoView({ block: "start" });
    await frames(2);
    await E.Screenshot("roundtable");
    log("round table laid out: " + rtc.querySelector(".rt-head").textContent);

    // 6d. The card comes back when the transcript is read again (a restart,
    // a stream reset): from the stored run, not from the live events.
    const rtSid = $(".session.current").dataset.session;
    const stored = await window.go.app.App.Reload(rtSid);
    assert((stored.roundtables || []).some((r) => r.status === "completed" && r.result && r.markdown), "the transcript carries the stored round table: " + JSON.stringify(stored.roundtables).slice(0, 300));
    window.runtime.EventsEmit("stream:event", { sessionId: rtSid, id: "", type: "stream.reset", data: {} });
    const rtc2 = await waitFor(() => !rtc.isConnected && $(".rt-card.rt-result"), "the round-table card after the transcript is read again");
    await sleep(300);
    assert(rtc2.querySelector(".rt-direction") && rtc2.querySelectorAll(".rt-finding").length >= 1 && rtc2.querySelector(".rt-challenge") && rtc2.querySelectorAll(".rt-vote").length === 2 && rtc2.querySelector(".rt-vote.dissent"), "the restored card has the direction, findings, challenges and votes");
    assert(rtc2.outerHTML === rtc.outerHTML, "the restored card is the live one: " + rtc2.outerHTML.slice(0, 300));
    assert($$("#messages .msg.assistant").every((x) => !x.textContent.includes("Recommended direction")), "the restored result is not shown as Markdown too");
    assert(!rtc2.querySelector("img,script") && window.__pwned === undefined, "the restored card is inert");
    log("round table restored after the transcript was read again");

    // 7. Rename, clear and delete sessions from the sidebar.
    window.confirm = () => true; // the native confirm dialog would block the script
    const App = window.go.app.App;
    const general = (await App.Sessions("general"))[0];
    assert(general, "a general session exists");
    const gsel = `.session[data-session="${general.sessionId}"]`;
    $(gsel + ' button[data-action="more"]').click();
    assert(!$(gsel + " .session-menu").hidden, "the ⋯ menu opens");
    $(gsel + ' button[data-action="rename"]').click();
    const nameInput = await waitFor(() => $(gsel + " input"), "the rename field");
    nameInput.value = "Renamed by e2e";
    nameInput.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    await waitFor(() => $(gsel + " .session-title")?.textContent === "Renamed by e2e", "the new name in the sidebar");
    assert((await App.Sessions("general"))[0].name === "Renamed by e2e", "the service stored the name");
    $(gsel + ' button[data-action="clear"]').click();
    let cleared = false;
    for (let i = 0; i < 40 && !cleared; i++) { cleared = (await App.Reload(general.sessionId)).messages.length === 0; if (!cleared) await sleep(100); }
    assert(cleared, "the history was cleared");
    if (ext) {
      // Delete has no blocking dialog: the session goes at once, Undo brings it back.
      $('.session[data-session="E2E-EXT-1"] button[data-action="delete"]').click();
      await waitFor(() => !$('.session[data-session="E2E-EXT-1"]'), "the deleted session to leave the sidebar");
      (await waitFor(() => $('#notice button[data-action="undo"]'), "the Undo button")).click();
      await waitFor(() => $('.session[data-session="E2E-EXT-1"]'), "the session back after Undo");
      $('.session[data-session="E2E-EXT-1"] button[data-action="delete"]').click();
      await waitFor(() => !$('.session[data-session="E2E-EXT-1"]'), "the deleted session to leave the sidebar again");
      let gone = false;
      for (let i = 0; i < 100 && !gone; i++) { gone = !(await App.Sessions("")).some((x) => x.sessionId === "E2E-EXT-1"); if (!gone) await sleep(100); }
      assert(gone, "the service deleted the session after the undo time");
    }
    log("rename, clear and delete ok");

    // 7b. Message actions on a new conversation: copy, edit and resend,
    // regenerate; then export it as Markdown and JSON and read the files.
    $('.agent-group[data-agent="general"] button[data-action="new"]').click();
    await waitFor(() => $(".session.current") && $("#messages .empty"), "a new general conversation");
    const actSid = $(".session.current").dataset.session;
    await say("Pack for the lake trip");
    await waitFor(() => lastAssistantDone("You said: Pack for the lake trip"), "the first answer");
    const umsg = $$("#messages .msg.user").pop();
    const copyBtn = umsg.querySelector('[data-action="copy"]');
    copyBtn.click();
    await waitFor(() => copyBtn.textContent === "Copied" || /Could not copy/.test($("#notice").textContent), "the copy to finish");
    assert(copyBtn.textContent === "Copied", "Copy copied the message: " + $("#notice").textContent);
    if (window.runtime.ClipboardGetText) {
      const clip = await window.runtime.ClipboardGetText();
      assert(clip === "Pack for the lake trip", "the clipboard holds the message: " + JSON.stringify(clip));
    }
    // Edit in place: the message becomes a field; the conversation branches there.
    umsg.querySelector('[data-action="edit"]').click();
    const editField = await waitFor(() => $("#messages .msg.user .edit-field"), "the edit field in the message");
    assert(editField.value === "Pack for the lake trip" && document.activeElement === editField, "Edit opened the message in place");
    editField.value = "Pack for the lake trip, two nights";
    $('#messages .msg.user [data-action="edit-send"]').click();
    const userTexts = () => $$("#messages .msg.user .msg-text").map((x) => x.textContent);
    await waitFor(() => lastAssistantDone("You said: Pack for the lake trip, two nights"), "the answer to the edited message");
    await waitFor(() => $("#messages .msg.user .versions"), "the versions of the edited message");
    assert(userTexts().length === 1 && userTexts()[0] === "Pack for the lake trip, two nights" && assistants().length === 1, "Edit replaced the message and its answer in place: " + JSON.stringify(userTexts()));
    // Regenerate answers again in place: one question, one answer, versions 3/3.
    lastAssistantDone("two nights").querySelector('[data-action="regenerate"]').click();
    await waitFor(() => $('#messages .msg.user .versions[data-versions="3/3"]') && lastAssistantDone("two nights") && !assistants().some((x) => x.classList.contains("streaming")), "the regenerated answer, version 3 of 3");
    assert(userTexts().length === 1 && assistants().length === 1, "Regenerate replaced the answer, the question shows once: " + JSON.stringify(userTexts()));
    log("message actions: copy, edit in place, regenerate in place (versions 3/3)");
    // Truth after a restart (checked by the restart phase): a denied call,
    // an error retried in place, a stopped turn, all in this conversation.
    await say('Write it down [[tool write_file {"path":"e2e-lake.txt","content":"tent"}]]');
    await waitFor(() => !$("#prompt").hidden && $("#prompt-title").textContent.includes("e2e-lake.txt"), "the prompt for e2e-lake.txt");
    $('#prompt button[data-choice="deny"]').click();
    await waitFor(() => $('.tool-card[data-tool="write_file"][data-decision="denied"]') && lastAssistantDone("Tool results:"), "the denied write_file card and the answer after it");
    await say("Check the weather [[status 500]]");
    const errLine = await waitFor(() => $("#messages .msg.error"), "the error line");
    assert(!/JARVIS_|config\.json|finish_reason/.test(errLine.textContent), "the error is in plain words: " + errLine.textContent);
    errLine.querySelector('[data-action="retry"]').click();
    await waitFor(() => $$("#messages .msg.error").length === 1 && $("#messages .msg.error") !== errLine && $("#stop").hidden, "the retried turn's error in place of the first");
    assert(userTexts().filter((t) => t.includes("Check the weather")).length === 1, "Retry did not post the message twice: " + JSON.stringify(userTexts()));
    await say("Count slowly [[slow 150]] [[deltas 60]]");
    await waitFor(() => !$("#stop").hidden && assistants().some((x) => x.classList.contains("streaming")), "a streaming turn to stop");
    $("#stop").click();
    await waitFor(() => $$("#messages .msg.stopped").length === 1 && $("#stop").hidden, "the stopped line");
    log("denied call, retried error and stopped turn in " + actSid);
    // An attached file (as the composer sends it) and a reply with a code
    // block, for the restart phase's screenshots: the file is a chip with
    // its size in bytes, the code highlighted.
    await say("My list, and a script for it:\n\n```python\nfor item in open('list.txt'):\n    print(item.strip())  # one a line\n```\n\nAttached file list.txt (52 B):\n```\ntent\nstove\nsleeping bags\nlanterns\nwater filter\nmaps\n```");
    await waitFor(() => lastAssistantDone("My list, and a script") && lastAssistantDone("My list, and a script").querySelector(".code-block .hljs-keyword"), "the reply with its code block highlighted");
    const chip = await waitFor(() => $("#messages .msg.user button.attachment"), "the attached file as a chip");
    assert(chip.textContent === "list.txt52 B" && chip.querySelector("svg.file-icon"), "the chip names the file and its size in bytes: " + chip.textContent);
    const exported = async (format) => {
      $("#notice").hidden = true;
      $(`.session[data-session="${actSid}"] [data-action="export-${format}"]`).click();
      const n = await waitFor(() => !$("#notice").hidden && /Exported to /.test($("#notice").textContent) && $("#notice").textContent, "the " + format + " export");
      const path = n.match(/Exported to (\S+\.(?:md|json))/)[1];
      return [path, await E.ReadExport(path)];
    };
    const [mdPath, md] = await exported("md");
    assert(md.includes("Pack for the lake trip, two nights") && md.includes("You said: Pack for the lake trip") && /^# /.test(md), "the Markdown export has the conversation: " + md.slice(0, 300));
    const [jsonPath, js] = await exported("json");
    const doc = JSON.parse(js);
    assert(JSON.stringify(doc).includes("two nights") && JSON.stringify(doc).includes("You said: Pack for the lake trip"), "the JSON export has the conversation: " + js.slice(0, 300));
    log("exported " + mdPath + " and " + jsonPath);

    // 7c. Search finds a conversation by a word of a reply, opened or not.
    $("#session-filter").value = "lake trip";
    $("#session-filter").dispatchEvent(new Event("input"));
    await waitFor(() => $(`.session[data-session="${actSid}"] .session-snippet mark`), "the search match with its snippet, the words marked");
    assert($(`.session[data-session="${actSid}"] .session-title`).textContent === "Pack for the lake trip", "the row keeps its title: " + $(`.session[data-session="${actSid}"] .session-title`).textContent);
    await frames(2);
    await E.Screenshot("search");
    $("#session-filter").value = "";
    $("#session-filter").dispatchEvent(new Event("input"));
    log("search across conversations shows the match");

    // 7d. Overwriting a file: the prompt shows the diff, not the whole content.
    await say('Rewrite the note [[tool write_file {"path":"e2e-note.txt","content":"hello from the e2e run\\nsecond line"}]]');
    await waitFor(() => !$("#prompt").hidden && $("#prompt-title").textContent.includes("e2e-note.txt"), "the overwrite prompt");
    const pdiff = await waitFor(() => $("#prompt-preview .prompt-diff"), "the diff in the prompt");
    assert(pdiff.querySelector(".diff-add")?.textContent.includes("second line") && /1 line added/.test($("#prompt-preview .label").textContent), "the diff shows the added line: " + pdiff.textContent);
    await frames(2);
    await E.Screenshot("prompt-diff");
    $('#prompt button[data-choice="deny"]').click();
    await waitFor(() => $("#prompt").hidden, "the prompt to close");
    log("overwrite prompt shows the diff");

    // 8. Measurements: 10,000 messages, then single delta appends.
    await window.jarvisBench.ready();
    const loadMs = window.jarvisBench.load(10000);
    await frames(2);
    const times = [];
    for (let i = 0; i < 60; i++) {
      times.push(window.jarvisBench.delta(`word${i} `));
      await frames(1);
    }
    // The same into a long reply (about 11 KB of headings, paragraphs, code
    // and lists), as a long streamed answer grows.
    let long = "";
    for (let k = 0; k < 60; k++) {
      long += `## Part ${k}\n\nSome **bold** text with \`code\` and a [link](https://example.com/${k}) and more words to fill the line.\n\n` +
        "```go\nfunc f(x int) int { return x * 2 }\n```\n\n- item one\n- item two\n\n";
    }
    window.jarvisBench.delta(long);
    await frames(1);
    const longTimes = [], wholeTimes = [];
    for (let i = 0; i < 60; i++) {
      longTimes.push(window.jarvisBench.delta(`word${i} `));
      await frames(1);
    }
    // Then the baseline: the whole reply rendered again at every delta.
    for (let i = 0; i < 30; i++) {
      wholeTimes.push(window.jarvisBench.deltaWhole(`w${i} `));
      await frames(1);
    }
    // A whole long reply shown at once (opening a session), 11 and 44 KB.
    const shown = {};
    for (const [name, text] of [["11", long], ["44", long.repeat(4)]]) {
      for (const baseline of [false, true]) {
        const ms = [];
        for (let i = 0; i < 5; i++) {
          ms.push(window.jarvisBench.show(text, baseline));
          await frames(1);
        }
        shown[name + (baseline ? "-baseline" : "")] = ms;
      }
    }
    await E.Bench(idleMB, idleRSSMB, loadMs, times, longTimes, wholeTimes, long.length, shown);
    log("bench written");
    // Back to a real session for the last screenshot.
    const first = $$("#agents .session-title")[0];
    if (first) first.click();
    await sleep(800);
    await frames(2);
    await E.Screenshot("window");
    E.Done(true, "all checks passed");
  } catch (e) {
    // A Go method's error arrives as a plain string.
    E.Done(false, e instanceof Error ? e.message + " @ " + e.stack : String(e));
  }
})();
