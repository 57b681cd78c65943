import { describe, expect, it, vi } from "vitest";
import { resourcesSection } from "../src/mcp";

describe("MCP resources in the panel", () => {
  it("lists resources and templates on demand; Attach reads a resource, a template once its URI is filled in", async () => {
    const attached: string[] = [];
    const sec = resourcesSection({
      resources: async () => [
        { server: "every", uri: "demo://resource/static/document/architecture.md", name: "architecture.md", title: "Architecture", description: "the docs" },
        { server: "every", uriTemplate: "demo://resource/dynamic/text/{resourceId}", name: "Dynamic Text Resource" },
      ],
      attach: (srv, uri) => attached.push(`${srv} ${uri}`),
      approve() {}, setTool() {}, setServer() {}, approveConfig() {}, restart() {}, add() {}, secret() {},
    });
    (sec.querySelector('[data-mcp="show-resources"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(sec.querySelectorAll(".mcp-resource").length).toBe(2));
    const [doc, tmpl] = [...sec.querySelectorAll(".mcp-resource")] as HTMLElement[];
    expect(doc.textContent).toContain("every: Architecture");
    expect(doc.textContent).toContain("the docs");
    (doc.querySelector('[data-mcp="attach-resource"]') as HTMLButtonElement).click();
    const field = tmpl.querySelector("input") as HTMLInputElement;
    expect(field.value).toBe("demo://resource/dynamic/text/{resourceId}");
    field.value = "demo://resource/dynamic/text/3";
    (tmpl.querySelector('[data-mcp="attach-resource"]') as HTMLButtonElement).click();
    expect(attached).toEqual(["every demo://resource/static/document/architecture.md", "every demo://resource/dynamic/text/3"]);
  });

  it("says so when the listing fails", async () => {
    const sec = resourcesSection({
      resources: async () => { throw new Error("MCP server \"every\" is not ready"); },
      approve() {}, setTool() {}, setServer() {}, approveConfig() {}, restart() {}, add() {}, secret() {},
    });
    (sec.querySelector('[data-mcp="show-resources"]') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(sec.querySelector(".warn")?.textContent).toContain("not ready"));
  });
});

describe("Open mcp.json", () => {
  it("is a button of the panel that calls the binding", async () => {
    const { renderMCP } = await import("../src/mcp");
    let opened = 0;
    const el = renderMCP({ configPath: "/home/u/.config/jarvis/mcp.json", servers: [] }, {
      openConfig: () => opened++,
      approve() {}, setTool() {}, setServer() {}, approveConfig() {}, restart() {}, add() {}, secret() {},
    });
    const b = el.querySelector('[data-mcp="open-config"]') as HTMLButtonElement;
    expect(b.title).toContain("/home/u/.config/jarvis/mcp.json");
    b.click();
    expect(opened).toBe(1);
  });
});
