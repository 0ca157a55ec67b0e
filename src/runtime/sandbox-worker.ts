/**
 * Entry point of a sandbox worker thread (bundled as dist/sandbox-worker.js). It owns one QuickJS
 * WebAssembly module whose memory is a fixed-size `WebAssembly.Memory`, and runs one hook at a
 * time in a pooled, hardened context of that module (`Sandbox`). `console` and `crypto` run here;
 * `fetch` and `db` are asked of the server's thread by message. The server terminates this thread
 * when a run overruns its limits where the engine's own checks cannot stop it (docs/decisions.md D9).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from 'quickjs-emscripten';
import { guestLibrary } from './guest-library.js';
import { Sandbox, Unserialisable, WithBody, type HostMember, type SandboxGlobals } from './sandbox.js';
import type { HostReply, ToServer, ToWorker, WorkerData, WireArgument } from './sandbox-wire.js';

const data = workerData as WorkerData;
const port = parentPort!;
const meter = new Float64Array(data.meter);
/** Past this size the heap counts as exhausted: the engine grows it in steps, so a failed allocation may leave it a little short of the maximum. */
const exhaustedBytes = data.memoryPages * 65_536 * 0.8;
let memory: WebAssembly.Memory | undefined;
const sandbox = new Sandbox(data.limits, { maxIdle: 1, maxRunsPerSlot: data.maxRunsPerSlot, maxCompiledPerSlot: data.maxCompiledPerSlot }, {
  meter,
  loadModule: () => {
    // Grows on demand up to `memoryPages`: past it, allocation fails inside the engine ("out of memory").
    memory = new WebAssembly.Memory({ initial: data.initialPages, maximum: data.memoryPages });
    return newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmModule: data.wasmModule, wasmMemory: memory }));
  },
});

const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let nextCall = 0;

function post(message: ToServer): void {
  port.postMessage(message);
}

/** A host member answered by the server's thread. */
function remote(name: string, method: string | undefined): HostMember {
  return {
    async: (args, signal) =>
      new Promise((resolve, reject) => {
        const call = ++nextCall;
        calls.set(call, { resolve, reject });
        signal.addEventListener('abort', () => calls.delete(call), { once: true });
        post({ type: 'call', call, name, method, args: args.map(toWire) });
      }),
  };
}

function toWire(value: unknown): WireArgument {
  return value instanceof Unserialisable ? { unserialisable: value.text } : { value };
}

function settle(reply: HostReply): void {
  const pending = calls.get(reply.call);
  if (!pending) return;
  calls.delete(reply.call);
  if (!reply.ok) pending.reject(new Error(reply.message));
  else if (reply.body !== undefined) pending.resolve(new WithBody(reply.fields ?? {}, reply.body));
  else pending.resolve(reply.value);
}

/** Runs wait here for the one before them: the server knows which run is running by their order. */
const queue: Extract<ToWorker, { type: 'run' }>[] = [];
let running = false;
/** Set after a run that left this thread unfit: it starts no further run, and the server gives them to another worker. */
let halted = false;

async function drain(): Promise<void> {
  if (running) return;
  running = true;
  for (let next = queue.shift(); next && !halted; next = queue.shift()) await run(next);
  running = false;
}

async function run(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const consoleLines: string[] = [];
  const host: SandboxGlobals['host'] = guestLibrary(consoleLines);
  for (const [name, methods] of Object.entries(message.host)) {
    if (methods === true) host[name] = remote(name, undefined);
    else host[name] = Object.fromEntries(methods.map((method) => [method, remote(name, method)]));
  }
  let outcome = await sandbox.run(message.code, { values: message.values, host }, message.cacheKey);
  calls.clear();
  const { compiles, modules } = sandbox.stats();
  // A run that filled the heap may fail with anything, even `null` when the engine cannot allocate its
  // error; and with the heap full the library writes to address 0. Such a thread is not used again.
  const exhausted = memory !== undefined && memory.buffer.byteLength >= exhaustedBytes;
  if (exhausted && !outcome.ok && outcome.kind !== 'timeout') {
    outcome = { ok: false, kind: 'memory', message: `Hook stopped: it used more than ${data.limits.memoryBytes / 1024 / 1024} MB of memory` };
  }
  const reusable = modules === 1 && !exhausted && (outcome.ok || outcome.kind !== 'memory');
  halted = !reusable;
  post({ type: 'done', outcome, console: consoleLines, compiles, reusable });
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'run') {
    queue.push(message);
    void drain();
  } else {
    settle(message);
  }
});

void sandbox.warm().then(
  () => post({ type: 'ready' }),
  () => process.exit(1),
);
