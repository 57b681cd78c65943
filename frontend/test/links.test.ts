// @vitest-environment jsdom
// mailto: links may only carry the fields of a message: some mail clients
// attach a local file named by "attach=" (or "attachment=") to the draft.
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../src/markdown";
import { openExternal } from "../src/bridge";

function href(md: string): string | null {
  const div = document.createElement("div");
  div.innerHTML = renderMarkdown(md);
  return div.querySelector("a")?.getAttribute("href") ?? null;
}

describe("mailto links", () => {
  it("keep only the message's fields", () => {
    expect(href("[x](mailto:a@example.com?subject=hi&attach=/home/u/.ssh/id_rsa)")).toBe("mailto:a@example.com?subject=hi");
    expect(href("[x](mailto:a@example.com?ATTACHMENT=%2Fetc%2Fpasswd&body=b&cc=c@example.com)")).toBe("mailto:a@example.com?body=b&cc=c@example.com");
    expect(href('<a href="mailto:a@example.com?%61ttach=/etc/passwd">x</a>')).toBe("mailto:a@example.com");
    expect(href("[x](mailto:a@example.com)")).toBe("mailto:a@example.com");
    expect(href("[x](https://example.com/?attach=1)")).toBe("https://example.com/?attach=1");
  });

  it("are opened only without other fields", () => {
    const opened: string[] = [];
    (window as any).runtime = { BrowserOpenURL: (u: string) => opened.push(u) };
    openExternal("mailto:a@example.com?subject=s&attach=/etc/passwd");
    openExternal("javascript:alert(1)");
    openExternal("https://example.com/");
    expect(opened).toEqual(["mailto:a@example.com?subject=s", "https://example.com/"]);
  });
});
