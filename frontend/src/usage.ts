// The line under a reply that says what it cost: the tokens the model
// server reported for the turn (assistant.final → usage) and how much of
// the model's context window the conversation fills after it.

/** A turn's usage, as the service reports it in its assistant.final. */
export interface ReplyUsage {
  prompt_tokens: number;
  completion_tokens: number;
  requests: number;
  context_tokens?: number;
  context_window?: number;
}

const fmt = (n: number) => n.toLocaleString("en-US");

/** "1,234 tokens · context 12% of 8,192" and its tooltip. */
export function usageLine(u: ReplyUsage): { text: string; title: string } {
  const total = u.prompt_tokens + u.completion_tokens;
  let text = `${fmt(total)} tokens`;
  let title = `${fmt(u.prompt_tokens)} tokens sent and ${fmt(u.completion_tokens)} written, as the model server counted them`;
  title += u.requests > 1 ? `, over ${u.requests} requests (tool rounds).` : ".";
  if (u.context_tokens && u.context_window) {
    const pct = Math.min(100, Math.round((u.context_tokens / u.context_window) * 100));
    text += ` · context ${pct}% of ${fmt(u.context_window)}`;
    title += ` The conversation now fills about ${fmt(u.context_tokens)} of the model's ${fmt(u.context_window)}-token window.`;
  }
  return { text, title };
}
