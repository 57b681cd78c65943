// Escaped plain text: what the window shows for a reply it does not render
// as Markdown (the renderer not loaded yet, a text outside the parser's
// limits, a parse that failed or ran over its budget). Kept apart from the
// renderer so that the first screen can use it without loading marked.

export function escapeHTML(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** A text shown as escaped plain text. */
export function plainHTML(text: string): string {
  return `<p class="plain-reply">${escapeHTML(text)}</p>`;
}
