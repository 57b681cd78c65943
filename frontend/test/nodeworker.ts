/// <reference types="node" />
// The window's parsing worker (src/md.worker.ts) run as a real worker thread
// in Node: esbuild bundles it as Vite does (Vite builds with esbuild and rollup), and a few lines give it the Web
// Worker names it uses (self.onmessage, self.postMessage).
import { execFileSync } from "node:child_process";
import { Worker } from "node:worker_threads";
import { join } from "node:path";
import type { WorkerLike } from "../src/offthread";

const shim = `
const { parentPort } = require("node:worker_threads");
const self = globalThis;
self.postMessage = (m) => parentPort.postMessage(m);
parentPort.on("message", (data) => self.onmessage && self.onmessage({ data }));
`;

export async function workerScript(): Promise<string> {
  // In a process of its own: esbuild refuses jsdom's TextEncoder.
  const entry = join(process.cwd(), "src", "md.worker.ts"); // vitest runs in frontend/
  const out = execFileSync(process.execPath, ["-e", `
    require("esbuild").build({ entryPoints: [${JSON.stringify(entry)}], bundle: true, write: false,
      format: "iife", platform: "neutral", target: "es2022" })
      .then((r) => process.stdout.write(r.outputFiles[0].text));`], { maxBuffer: 16 << 20, encoding: "utf8" });
  return shim + out;
}

/** Starts script as a worker thread behind the Web Worker interface. */
export function nodeWorker(script: string, started: Worker[] = []): WorkerLike {
  const w = new Worker(script, { eval: true });
  started.push(w);
  const like: WorkerLike = {
    postMessage: (m) => w.postMessage(m),
    terminate: () => void w.terminate(),
    onmessage: null,
    onerror: null,
  };
  w.on("message", (data: unknown) => like.onmessage?.({ data }));
  w.on("error", (e: unknown) => like.onerror?.(e));
  return like;
}
