// The parsing worker (offthread.ts): Markdown to HTML off the window's
// thread. It only parses; the window sanitizes what comes back (DOMPurify
// needs a DOM). parseReply never throws: a text outside the limits or one
// marked fails on comes back as escaped plain text.
import { parseReply } from "./mdparse";

const scope = self as unknown as {
  onmessage: ((e: { data: { id: number; text: string } }) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = (e) => {
  scope.postMessage({ id: e.data.id, reply: parseReply(e.data.text) });
};
