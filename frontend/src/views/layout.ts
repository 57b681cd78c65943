// The window's layout the user chooses: the conversation list (sidebar)
// shown or folded away, by the ☰ button in the header or Ctrl+B, and
// remembered for the next start. Ctrl+K (find a conversation) shows it again.
const KEY = "jarvis.sidebar";

export function mountSidebarToggle(): void {
  const shell = document.getElementById("shell")!;
  const button = document.getElementById("sidebar-toggle")!;
  const set = (collapsed: boolean, remember = true) => {
    shell.classList.toggle("sidebar-collapsed", collapsed);
    const label = collapsed ? "Show the conversation list (Ctrl+B)" : "Hide the conversation list (Ctrl+B)";
    button.setAttribute("aria-expanded", String(!collapsed));
    button.setAttribute("aria-label", label);
    button.title = label;
    if (remember) localStorage.setItem(KEY, collapsed ? "collapsed" : "shown");
  };
  set(localStorage.getItem(KEY) === "collapsed", false);
  button.addEventListener("click", () => set(!shell.classList.contains("sidebar-collapsed")));
  // Capture: Ctrl+K's own handler (keys.ts) then finds the filter shown.
  document.addEventListener(
    "keydown",
    (e) => {
      const mod = (e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey;
      if (mod && e.key.toLowerCase() === "b") {
        e.preventDefault();
        set(!shell.classList.contains("sidebar-collapsed"));
      } else if (mod && e.key.toLowerCase() === "k" && shell.classList.contains("sidebar-collapsed")) set(false);
    },
    true,
  );
}
