import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts the worker thread whose entry file is `name` (without extension) beside the caller's module
 * (`callerUrl`: its `import.meta.url`). In the built daemon scripts/bundle.mjs puts each worker entry
 * next to the chunks. From source (tests and bench run under tsx) the worker has to install tsx's
 * module hooks itself: Node 20 does not carry `--import=tsx` into worker threads (tsx#354).
 */
export function startWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  if (callerUrl.endsWith('.ts')) {
    const entry = new URL(`./${name}.ts`, callerUrl).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const code = `import(${JSON.stringify(tsx)}).then((m) => m.register()).then(() => import(${JSON.stringify(entry)}))`;
    return new Worker(code, { ...options, eval: true });
  }
  return new Worker(new URL(`./${name}.js`, callerUrl), options);
}
