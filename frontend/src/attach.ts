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
const size = (n: number) => (n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KB` : mb(n));

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

/** The message's text with the attached text files after it, each in a fence longer than any in it. */
export function withTextFiles(text: string, files: Attachment[]): string {
  const blocks = files
    .filter((f) => f.kind === "text")
    .map((f) => {
      const longest = Math.max(2, ...(f.content.match(/`+/g) ?? []).map((m) => m.length));
      const fence = "`".repeat(longest + 1);
      return `Attached file ${f.name}:\n${fence}\n${f.content.replace(/\n$/, "")}\n${fence}`;
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
        return h("span", { class: "attachment", "data-kind": f.kind }, `${f.kind === "image" ? "🖼" : "📄"} ${f.name} (${size(f.size)})`, remove);
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
