import { describe, expect, it } from "vitest";
import { renderMCP, type MCPActions, type MCPState } from "../src/mcp";

function acts(calls: string[]): MCPActions {
  return {
    approve() {},
    setTool() {},
    setServer() {},
    approveConfig() {},
    restart() {},
    add() {},
    secret() {},
    signIn: (s) => calls.push(`signin ${s}`),
    signOut: (s) => calls.push(`signout ${s}`),
  };
}

describe("MCP sign-in", () => {
  it("asks to sign in to a server that waits for it, and signs out of one signed in", () => {
    const calls: string[] = [];
    const st: MCPState = {
      configPath: "/x/mcp.json",
      servers: [
        { name: "linear", label: "linear.app", transport: "http", state: "signin", error: "the server asks you to sign in", restarts: 0, tools: [], signIn: true },
        { name: "gh", transport: "http", state: "ready", restarts: 0, tools: [], signIn: true, signedIn: true },
        { name: "files", transport: "stdio", state: "ready", restarts: 0, tools: [] },
      ],
    };
    const el = renderMCP(st, acts(calls));
    const row = el.querySelector('[data-mcp-signin="linear"]')!;
    expect(row.textContent).toContain("linear.app asks you to sign in");
    expect(el.querySelector('[data-mcp-server="linear"] .mcp-error')).toBeNull();
    (row.querySelector("[data-mcp-signin-go]") as HTMLButtonElement).click();
    (el.querySelector('[data-mcp-signout="gh"]') as HTMLButtonElement).click();
    expect(el.querySelector('[data-mcp-signin="files"]')).toBeNull();
    expect(el.querySelector('[data-mcp-signin-go="gh"]')).toBeNull();
    expect(calls).toEqual(["signin linear", "signout gh"]);
  });
  it("says a revoked sign-in must be renewed, waits for the browser, and shows a failed sign-in", () => {
    const calls: string[] = [];
    const st: MCPState = {
      configPath: "/x/mcp.json",
      servers: [
        { name: "a", transport: "http", state: "signin", error: "sign in again: the authorization server refused to renew the sign-in (invalid_grant)", restarts: 0, tools: [], signIn: true },
        { name: "b", transport: "http", state: "signin", error: "x", restarts: 0, tools: [], signIn: true, signingIn: true },
        { name: "c", transport: "http", state: "signin", error: "x", restarts: 0, tools: [], signIn: true, signInError: "the sign-in was not finished in the browser" },
      ],
    };
    const el = renderMCP(st, acts(calls));
    expect(el.querySelector('[data-mcp-signin-go="a"]')!.textContent).toBe("Sign in again");
    expect(el.querySelector('[data-mcp-signin="a"]')!.textContent).toContain("expired or was revoked");
    expect(el.querySelector('[data-mcp-signin="b"]')!.textContent).toContain("Finish signing in in your browser");
    expect(el.querySelector('[data-mcp-signin-go="b"]')).toBeNull();
    expect(el.querySelector('[data-mcp-signin="c"]')!.textContent).toContain("did not succeed: the sign-in was not finished");
  });
});
