// The links a reply may open outside the window: http(s) as they are, and
// mailto with only the fields of a message (to, cc, bcc, subject, body).
// Some mail clients honour "attach=" or "attachment=" and attach a local
// file to the draft: a reply could make the user send their own files.

export const SAFE_SCHEME = /^(?:https?:|mailto:)/i;
const MAIL_FIELDS = new Set(["to", "cc", "bcc", "subject", "body"]);

/** The URL to open for href, or null when it must not be opened. */
export function externalURL(href: string): string | null {
  const url = href.trim();
  if (!SAFE_SCHEME.test(url)) return null;
  if (!/^mailto:/i.test(url)) return url;
  const q = url.indexOf("?");
  if (q < 0) return url;
  const keep = url
    .slice(q + 1)
    .split("&")
    .filter((p) => {
      let key = p.split("=")[0];
      try {
        key = decodeURIComponent(key);
      } catch {
        return false;
      }
      return MAIL_FIELDS.has(key.trim().toLowerCase());
    });
  return url.slice(0, q) + (keep.length ? "?" + keep.join("&") : "");
}
