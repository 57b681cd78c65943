// Parsing replies off the window's thread. A reply is untrusted text; however
// it was built, parsing it must not freeze the window. Replies are parsed one
// at a time in a Web Worker (md.worker.ts), each within a time budget: past
// the budget the worker is abandoned (terminated; the next reply gets a new
// one) and the reply is shown as escaped plain text. The newest request is
// parsed first (the bottom of a conversation is what the window shows), and a
// request no longer wanted (its message left the window) is dropped unparsed.
import { parseReply, splitThoughts, type ParsedReply } from "./mdparse";
import { plainHTML } from "./plain";

/** What OffThread needs of a Worker (a Web Worker in the window). */
export interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): void;
  onmessage: ((e: { data: any }) => void) | null;
  onerror: ((e: unknown) => void) | null;
}

/** The time a reply may take to parse before its worker is abandoned. */
export const PARSE_BUDGET_MS = 3000;

/** A reply shown as plain text: the thoughts and the answer escaped. */
export function plainReply(text: string): ParsedReply {
  const { thoughts, answer } = splitThoughts(text);
  return { thoughts: thoughts.map(plainHTML), answer: plainHTML(answer) };
}

interface Job {
  id: number;
  text: string;
  wanted: () => boolean;
  resolve: (r: ParsedReply | null) => void;
}

export class OffThread {
  private worker: WorkerLike | undefined;
  private busy: (Job & { timer: ReturnType<typeof setTimeout> }) | undefined;
  private jobs: Job[] = [];
  private seq = 0;
  /** The worker could not start (no Worker, or its script was refused): replies are parsed here, within the limits of mdparse.ts. */
  unavailable = false;
  /** How many workers were abandoned past the budget. */
  abandoned = 0;

  constructor(
    private readonly spawn: () => WorkerLike,
    private readonly budgetMs = PARSE_BUDGET_MS,
  ) {}

  /**
   * The reply's parts as HTML, not yet sanitized: parsed, or plain text when
   * parsing ran over the budget; null when wanted() said no before its turn.
   */
  parse(text: string, wanted: () => boolean = () => true): Promise<ParsedReply | null> {
    return new Promise((resolve) => {
      this.jobs.push({ id: ++this.seq, text, wanted, resolve });
      // After the caller's task: the message it renders is put in the window
      // by then, and the newest of the messages it rendered goes first.
      queueMicrotask(() => this.next());
    });
  }

  private next(): void {
    if (this.busy) return;
    let job: Job | undefined;
    while ((job = this.jobs.pop()) && !job.wanted()) job.resolve(null);
    if (!job) return;
    const w = this.start();
    if (!w) {
      // Here, one reply a task, so that the window stays responsive between them.
      const j = job;
      this.busy = { ...j, timer: setTimeout(() => this.finish(parseReply(j.text)), 0) };
      return;
    }
    const timer = setTimeout(() => {
      // Over the budget: this worker may never come back.
      this.stop();
      this.abandoned++;
      this.finish(plainReply(job!.text));
    }, this.budgetMs);
    this.busy = { ...job, timer };
    w.postMessage({ id: job.id, text: job.text });
  }

  private finish(r: ParsedReply): void {
    const b = this.busy;
    if (!b) return;
    clearTimeout(b.timer);
    this.busy = undefined;
    b.resolve(r);
    this.next();
  }

  private start(): WorkerLike | undefined {
    if (this.worker || this.unavailable) return this.worker;
    try {
      const w = this.spawn();
      w.onmessage = (e) => {
        if (this.busy && e.data?.id === this.busy.id) this.finish(e.data.reply as ParsedReply);
      };
      w.onerror = () => {
        // The script did not load or failed outside parsing (which cannot
        // throw): parse here from now on.
        this.stop();
        this.unavailable = true;
        if (this.busy) this.finish(parseReply(this.busy.text));
      };
      this.worker = w;
    } catch {
      this.unavailable = true;
    }
    return this.worker;
  }

  private stop(): void {
    this.worker?.terminate();
    this.worker = undefined;
  }
}
