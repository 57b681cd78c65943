// @vitest-environment jsdom
// A coding agent's plan (status events of kind "plan") shown as one
// checklist card per turn in the conversation, updated in place.
import { beforeEach, describe, expect, it } from "vitest";
import { Actions } from "../src/actions";
import { Store } from "../src/store";
import { planSteps, Transcript } from "../src/transcript";
import { mountConversation } from "../src/views/conversation";
import { fakeBridge, loadPage, type FakeBridge, bridgeOf } from "./fakebridge";

const ev = (id: number, type: string, data: any) => ({ id: String(id), type, data });

describe("plan", () => {
  it("keeps one plan item per turn, the latest plan, from its steps or its text", () => {
    const t = new Transcript();
    t.apply(ev(1, "user.message", { text: "fix it", turn_id: "t1" }));
    t.apply(ev(2, "status", { kind: "plan", turn_id: "t1", text: "Plan:\n[~] look\n[ ] fix", plan: [{ content: "look", status: "in_progress", priority: "high" }, { content: "fix", status: "pending" }] }));
    const eff = t.apply(ev(3, "status", { kind: "plan", turn_id: "t1", text: "Plan:\n[x] look\n[~] fix" }));
    expect(eff.changed).toEqual(["plan-t1"]);
    expect(t.items.map((i) => i.kind)).toEqual(["user", "plan"]);
    expect(t.get("plan-t1")!.plan).toEqual([{ content: "look", status: "completed" }, { content: "fix", status: "in_progress" }]);
    t.apply(ev(4, "assistant.final", { text: "Done", turn_id: "t1" }));
    expect(t.items.map((i) => i.kind)).toEqual(["user", "plan", "assistant"]); // the plan stays, not a transient line
    t.apply(ev(5, "status", { kind: "plan", turn_id: "t2", text: "Plan:\n[ ] next" }));
    expect(t.items.filter((i) => i.kind === "plan")).toHaveLength(2);
    expect(planSteps({ text: "Plan:\nnot a step\n[?] nor this" })).toEqual([]);
  });

  describe("in the window", () => {
    let fb: FakeBridge;
    let store: Store;
    let actions: Actions;
    beforeEach(async () => {
      loadPage();
      fb = fakeBridge();
      store = new Store();
      actions = new Actions(store, bridgeOf(fb));
      mountConversation(actions);
      await actions.start();
    });

    it("shows a checklist card that follows the agent's plan", async () => {
      await actions.newSession();
      const id = store.sessionId;
      actions.onStreamEvent({ sessionId: id, id: "1", type: "status", data: { kind: "plan", turn_id: "t", text: "", plan: [{ content: "read <b>the</b> code", status: "in_progress" }, { content: "write tests", status: "pending" }] } });
      const card = () => document.querySelector("#messages .msg.plan .plan-card") as HTMLElement;
      expect(card().querySelector(".plan-title")!.textContent).toBe("Plan · 0 of 2 done");
      const boxes = () => [...card().querySelectorAll<HTMLInputElement>("input[type=checkbox]")];
      expect(boxes().map((b) => [b.checked, b.disabled, b.getAttribute("aria-label")])).toEqual([
        [false, true, "read <b>the</b> code: in progress"],
        [false, true, "write tests: to do"],
      ]);
      expect(card().querySelector("b")).toBeNull(); // the agent's text is text, not markup
      actions.onStreamEvent({ sessionId: id, id: "2", type: "status", data: { kind: "plan", turn_id: "t", text: "", plan: [{ content: "read <b>the</b> code", status: "completed" }, { content: "write tests", status: "in_progress" }] } });
      expect(document.querySelectorAll("#messages .msg.plan")).toHaveLength(1);
      expect(boxes().map((b) => b.checked)).toEqual([true, false]);
      expect(card().querySelector(".plan-title")!.textContent).toBe("Plan · 1 of 2 done");
      expect([...card().querySelectorAll("li")].map((li) => li.className)).toEqual(["plan-step completed", "plan-step in_progress"]);
    });
  });
});
