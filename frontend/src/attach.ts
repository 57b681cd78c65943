// Attachments in the composer: a picker button and drag and drop. A text
// file goes into the message's text (its name and content in a fenced
// block); an image is sent as an image content part (a data URL), through
// the SendWithImages binding. The limits are the service's (10 MB a file,
// 20 MB a message); a file over them, or neither text nor a supported
// image, is refused here in plain words before anything is sent.
import { h } from "./view";

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_MESSAGE_BYTES = 20 * 1024 * 1024;
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

export interface Attachment {
  name: string;
  size: number;
  kind: "text" | "image";
  content: string; // the text, or the image's data URL
}

const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;

/** A size in words: "52 B", "1.5 KB", "12 KB", "3.4 MB". */
export function byteSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`;
  return mb(n);
}

const SVG = "http://www.w3.org/2000/svg";

/**
 * A file or image icon drawn inline (the window's fonts need not have 📄 or
 * 🖼: without an emoji font they showed an empty box).
 */
export function fileIcon(kind: "text" | "image"): SVGElement {
  const svg = document.createElementNS(SVG, "svg");
  for (const [k, v] of Object.entries({ viewBox: "0 0 16 16", width: "14", height: "14", class: "file-icon", "aria-hidden": "true", fill: "none", stroke: "currentColor", "stroke-width": "1.4", "stroke-linejoin": "round" })) svg.setAttribute(k, v);
  const shapes = kind === "image" ? ["M2.5 3.5h11v9h-11z", "M2.5 11l3.5-3.5 3 3 2-2 2.5 2.5"] : ["M3.5 1.5h6l3 3v10h-9z", "M9.5 1.5v3h3", "M5.5 8h5M5.5 10.5h5"];
  for (const d of shapes) {
    const p = document.createElementNS(SVG, "path");
    p.setAttribute("d", d);
    svg.append(p);
  }
  return svg;
}

function read(file: File, as: "text" | "url"): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(new Error(`Could not read ${file.name}.`));
    if (as === "text") r.readAsText(file);
    else r.readAsDataURL(file);
  });
}

/** Reads a file the user attached; throws an Error in plain words when it cannot go. */
export async function readAttachment(file: File): Promise<Attachment> {
  if (file.size > MAX_FILE_BYTES) throw new Error(`${file.name} is ${mb(file.size)}; a file may have at most 10 MB.`);
  if (file.type.startsWith("image/")) {
    if (!IMAGE_TYPES.includes(file.type)) throw new Error(`${file.name}: only PNG, JPEG, GIF and WebP images can be sent.`);
    return { name: file.name, size: file.size, kind: "image", content: await read(file, "url") };
  }
  const text = await read(file, "text");
  if (text.includes("\u0000") || text.includes("\uFFFD")) throw new Error(`${file.name} is neither a text file nor an image, so it cannot be sent.`);
  return { name: file.name, size: file.size, kind: "text", content: text };
}

/** A text file attached to a sent message, as splitTextFiles finds it. */
export interface SentFile {
  name: string;
  content: string;
  size: string; // in words, as it was attached ("52 B")
}

/**
 * A sent message split back into the user's words and the text files
 * withTextFiles put after them, so the conversation shows the files as
 * chips, not as fenced text. A message without them comes back whole.
 */
export function splitTextFiles(message: string): { text: string; files: SentFile[] } {
  const files: SentFile[] = [];
  const block = /(?:^|\n\n)Attached file ([^\n]+?)(?: \(([\d.]+ [KM]?B)\))?:\n(`{3,})\n([\s\S]*?)\n?\3(?=\n\nAttached file |$)/g;
  let first = -1;
  let end = 0;
  for (let m = block.exec(message); m; m = block.exec(message)) {
    if (first < 0) first = m.index;
    else if (m.index !== end) return { text: message, files: [] }; // not only files after the words
    end = m.index + m[0].length;
    files.push({ name: m[1], content: m[4], size: m[2] ?? byteSize(new TextEncoder().encode(m[4]).length) });
  }
  if (!files.length || end !== message.length) return { text: message, files: [] };
  return { text: message.slice(0, first), files };
}

/** The message's text with the attached text files after it, each in a fence longer than any in it. */
export function withTextFiles(text: string, files: Attachment[]): string {
  const blocks = files
    .filter((f) => f.kind === "text")
    .map((f) => {
      const longest = Math.max(2, ...(f.content.match(/`+/g) ?? []).map((m) => m.length));
      const fence = "`".repeat(longest + 1);
      return `Attached file ${f.name} (${byteSize(f.size)}):\n${fence}\n${f.content.replace(/\n$/, "")}\n${fence}`;
    });
  return [text.trim() ? text : "", ...blocks].filter(Boolean).join("\n\n");
}

export interface AttachmentsBox {
  /** The attachments to send, removed from the composer. */
  take(): Attachment[];
  /** Puts attachments back (a message that could not be sent). */
  restore(files: Attachment[]): void;
  add(files: Iterable<File>): Promise<void>;
}

/** Adds the picker, the list of attachments and drag and drop to the composer. */
export function mountAttachments(composer: HTMLElement, onRefused: (text: string) => void): AttachmentsBox {
  let files: Attachment[] = [];
  const list = h("div", { id: "attachments", class: "attachments", hidden: "" });
  const picker = h("input", { id: "attach-input", type: "file", multiple: "", hidden: "" }) as HTMLInputElement;
  // A word, not an emoji: a system without an emoji font would show a box.
  const button = h("button", { id: "attach", type: "button", title: "Attach files or images (or drop them here); at most 10 MB each, 20 MB a message", "aria-label": "Attach files" }, "Attach");
  composer.prepend(list);
  composer.querySelector("textarea")!.before(button, picker);

  const render = () => {
    list.hidden = files.length === 0;
    list.replaceChildren(
      ...files.map((f, i) => {
        const remove = h("button", { type: "button", class: "icon", title: `Remove ${f.name}`, "aria-label": `Remove ${f.name}` }, "✕");
        remove.addEventListener("click", () => {
          files.splice(i, 1);
          render();
        });
        const chip = h("span", { class: "attachment", "data-kind": f.kind, title: f.name }, h("span", { class: "attachment-name" }, f.name), h("span", { class: "attachment-size" }, byteSize(f.size)), remove);
        chip.prepend(fileIcon(f.kind));
        return chip;
      }),
    );
  };
  const add = async (picked: Iterable<File>) => {
    for (const file of Array.from(picked)) {
      try {
        const a = await readAttachment(file);
        const total = files.reduce((n, f) => n + f.size, 0) + a.size;
        if (total > MAX_MESSAGE_BYTES) throw new Error(`${file.name} would make the message ${mb(total)}; a message may carry at most 20 MB.`);
        files.push(a);
      } catch (ex) {
        onRefused((ex as Error).message);
      }
    }
    render();
  };
  button.addEventListener("click", () => picker.click());
  picker.addEventListener("change", () => {
    void add(picker.files ?? []).then(() => (picker.value = ""));
  });
  composer.addEventListener("dragover", (e) => {
    if (!e.dataTransfer?.types.includes("Files")) return;
    e.preventDefault();
    composer.classList.add("dropping");
  });
  composer.addEventListener("dragleave", () => composer.classList.remove("dropping"));
  composer.addEventListener("drop", (e) => {
    composer.classList.remove("dropping");
    if (!e.dataTransfer?.files.length) return;
    e.preventDefault();
    void add(e.dataTransfer.files);
  });
  return {
    take() {
      const out = files;
      files = [];
      render();
      return out;
    },
    restore(back) {
      files = [...back, ...files];
      render();
    },
    add,
  };
}
