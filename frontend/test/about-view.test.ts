// @vitest-environment jsdom
// About: the licence, the links, and "Copy diagnostics" putting the
// service's diagnostics text on the clipboard.
import { beforeEach, describe, expect, it } from "vitest";
import { aboutLinks } from "../src/about";
import { fakeBridge, flush, type FakeBridge } from "./fakebridge";

let fb: FakeBridge;
let copied = "";

beforeEach(() => {
  fb = fakeBridge();
  copied = "";
  Object.defineProperty(navigator, "clipboard", { value: { writeText: async (t: string) => void (copied = t) }, configurable: true });
});

describe("About", () => {
  it("says the licence, links to the project, its licence and its issues, and copies the diagnostics", async () => {
    const said: string[] = [];
    const els = aboutLinks({ product: "Jarvis", version: "1.2.3", commit: "abc", dataDir: "", configPath: "", secretsFile: "", autostartSupported: false, autostart: false, license: "MIT", homepage: "https://github.com/jarvis-desktop/jarvis", issues: "https://github.com/jarvis-desktop/jarvis/issues" }, (m) => said.push(m));
    document.body.replaceChildren(...els);
    expect(document.querySelector('[data-about="License"]')!.textContent).toBe("Free software under the MIT licence.");
    expect((document.getElementById("about-license-link") as HTMLAnchorElement).getAttribute("href")).toBe("https://github.com/jarvis-desktop/jarvis/blob/main/LICENSE");
    expect((document.getElementById("about-issues") as HTMLAnchorElement).getAttribute("href")).toBe("https://github.com/jarvis-desktop/jarvis/issues");
    (document.getElementById("about-diagnostics") as HTMLButtonElement).click();
    await flush();
    await flush();
    expect(fb.calls.at(-1)!.method).toBe("Diagnostics");
    expect(copied).toBe("Jarvis test (commit abc)\nSystem: Debian\nKernel: 6.1\nService: on this computer (loopback)\nModel set up: yes\n");
    expect(said.at(-1)).toMatch(/^Diagnostics copied/);
  });
});
