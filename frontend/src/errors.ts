// A turn's error in plain words with what the user can do about it (Set up
// a model, Start Ollama, Retry), from the error's code: the window never shows an
// environment variable, a config key or a protocol field.

export type ErrorAction = "setup" | "retry" | "ollama";

export interface PlainError {
  text: string;
  actions: ErrorAction[];
}

const BY_CODE: Record<string, PlainError> = {
  provider_not_configured: { text: "No model is set up for this assistant yet.", actions: ["setup"] },
  not_configured: { text: "No model is set up for this assistant yet.", actions: ["setup"] },
  upstream_unreachable: { text: "The model server did not answer: it may not be running (start Ollama or your model server), or its address may be wrong.", actions: ["retry", "setup"] },
  upstream_timeout: { text: "The model took too long to answer.", actions: ["retry"] },
  upstream_auth: { text: "The model server refused the key. Enter a valid key in the model setup.", actions: ["setup"] },
  upstream_rate_limited: { text: "The model server is busy right now. Wait a moment, then retry.", actions: ["retry"] },
  upstream_malformed: { text: "The answer stopped part-way: the connection to the model broke.", actions: ["retry"] },
  upstream_error: { text: "The model server failed to answer.", actions: ["retry"] },
  upstream_bad_request: { text: "The model server could not take this request.", actions: ["retry"] },
  interrupted: { text: "Jarvis closed while this answer was being written.", actions: ["retry"] },
};

// Words a person should not have to read: variables, config files and keys, protocol fields.
const TECHNICAL = /\bJARVIS_[A-Z_]+|config\.json|"[a-zA-Z]+":|\bfinish_reason\b|\bbaseUrl\b|\bapiKeyRef\b|\bdefaultProvider\b|\b(?:GET|POST|PUT|DELETE) \/|\/v1\/|\bsession [a-z]_[0-9a-f]{6,}/;

// The model server that did not answer is Ollama (its port, or its name).
const OLLAMA = /:11434\b|\bollama\b/i;

/** The error of a turn, as the window shows it. */
export function plainError(code: string | undefined, message: string): PlainError {
  if (code === "upstream_unreachable" && OLLAMA.test(message)) {
    return { text: "Ollama, the model server, did not answer: it is probably not running.", actions: ["ollama", "retry", "setup"] };
  }
  const known = code ? BY_CODE[code] : undefined;
  if (known) return known;
  if (TECHNICAL.test(message)) return { text: "Something went wrong while answering.", actions: ["retry"] };
  return { text: message || "Something went wrong while answering.", actions: code === "send_failed" ? [] : ["retry"] };
}
