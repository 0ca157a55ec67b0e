/**
 * Entry point of a sandbox worker thread (bundled as dist/sandbox-worker.js). It owns one QuickJS
 * WebAssembly module whose memory is a capped `WebAssembly.Memory`, and runs the hooks sent to it
 * one at a time, in order, in a pooled, hardened context of that module (`Sandbox`). `console` and `crypto` run here;
 * `fetch` and `db` are asked of the server's thread by message. The server terminates this thread
 * when a run overruns its limits where the engine's own checks cannot stop it (docs/decisions.md D9).
 */
import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from 'quickjs-emscripten';
import { guestLibrary, unwrapResponse } from './guest-library.js';
import { Sandbox } from './sandbox.js';
import { threadCpuClock } from './thread-clock.js';
import { stoppedAt, Unserialisable, WithBody, type HostMember, type SandboxGlobals } from './sandbox-types.js';
import { CodeCache, CURRENT_RUN, QUEUED, RUN_SLOTS, STARTED, type HostReply, type ToServer, type ToWorker, type WorkerData, type WireArgument } from './sandbox-wire.js';
import { withFields } from '../platform/objects.js';

const data = workerData as WorkerData;
const port = parentPort!;
const meter = new Float64Array(data.meter);
const runStates = new Int32Array(data.runStates);
/** Set when the engine asked for more memory than the cap allows since the start of the current run. */
let growRefused = false;
let memory: WebAssembly.Memory | undefined;
const sandbox = new Sandbox(data.limits, { maxIdle: 1, maxRunsPerSlot: data.maxRunsPerSlot, maxCompiledPerSlot: data.maxCompiledPerSlot }, {
  meter,
  // Opened here, so that it reads this thread's clock.
  clock: threadCpuClock(),
  loadModule: () => {
    // Grows on demand up to `memoryPages`: past it, allocation fails inside the engine ("out of memory").
    const wasmMemory = new WebAssembly.Memory({ initial: data.initialPages, maximum: data.memoryPages });
    memory = wasmMemory;
    const grow = wasmMemory.grow.bind(wasmMemory);
    // Emscripten's allocator calls this to grow the heap, trying three sizes (20 %, 10 % and 5 % more
    // than it needs) until one fits: three refusals in a row are an allocation the cap refused.
    let refusals = 0;
    wasmMemory.grow = (delta: number) => {
      try {
        const previous = grow(delta);
        refusals = 0;
        return previous;
      } catch (error) {
        if (++refusals >= 3) growRefused = true;
        throw error;
      }
    };
    // The engine's own messages (an assertion QuickJS raises when a runtime freed after a stopped
    // run still holds objects) are not the server's output: `dispose` reports that failure and the
    // module is dropped (see Sandbox.drop), so they are kept out of the process's stderr.
    const emscriptenModule = { printErr: () => {}, print: () => {} } as unknown as NonNullable<Parameters<typeof newVariant>[1]['emscriptenModule']>;
    return newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmModule: data.wasmModule, wasmMemory, emscriptenModule }));
  },
});

/** Emscripten places nothing below this address: a non-zero byte there was written through a null pointer. */
const NULL_PAGE_BYTES = 1024;

/** Whether nothing was written through a null pointer (the library does when its allocation fails with the heap full). */
function nullPageClean(): boolean {
  if (memory === undefined) return false;
  // Word by word: this runs after every run, and a callback per byte cost several microseconds.
  const words = new Int32Array(memory.buffer, 0, NULL_PAGE_BYTES / Int32Array.BYTES_PER_ELEMENT);
  for (let index = 0; index < words.length; index++) if (words[index] !== 0) return false;
  return true;
}

const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let nextCall = 0;

function post(message: ToServer): void {
  port.postMessage(message);
}

/** A host member answered by the server's thread. */
function remote(name: string, method: string | undefined): HostMember {
  return {
    async: (args) =>
      new Promise((resolve, reject) => {
        const call = ++nextCall;
        calls.set(call, { resolve, reject });
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
  for (let next = queue.shift(); next && !halted; next = queue.shift()) {
    // The server may have taken this run back while an earlier one ran long: then another worker runs it.
    if (Atomics.compareExchange(runStates, next.seq % RUN_SLOTS, QUEUED, STARTED) !== QUEUED) continue;
    // The watchdog reads the meter only for the run named here: never the last reading of another.
    meter[0] = 0;
    meter[1] = 0;
    Atomics.store(runStates, CURRENT_RUN, next.seq);
    await run(next);
  }
  running = false;
}

async function run(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  if (message.code === undefined) {
    // The server sent no code for a hook this worker does not hold: never expected (see CodeCache).
    // The worker is not used again, so that a new one starts with both copies empty.
    halted = true;
    post({ type: 'done', outcome: { ok: false, kind: 'thrown', message: 'The hook runtime failed' }, console: [], compiles: sandbox.stats().compiles, reusable: false });
    return;
  }
  const consoleLines: string[] = [];
  const responseBrand = randomUUID();
  const host: SandboxGlobals['host'] = guestLibrary(consoleLines, responseBrand);
  for (const [name, methods] of Object.entries(message.host)) {
    if (methods === true) host[name] = remote(name, undefined);
    else host[name] = Object.fromEntries(methods.map((method) => [method, remote(name, method)]));
  }
  growRefused = false;
  let outcome = await sandbox.run(message.code, { values: message.values, host, readInstance: message.readInstance }, message.cacheKey);
  calls.clear();
  // A run that failed after reaching the cap may fail with anything, even `null` when the engine
  // cannot allocate its error: that is `memory`. (A single allocation past the limit is refused
  // before the heap is touched.) With the heap full the library writes through a null pointer: a
  // thread whose null page is no longer clean is not used again, nor one whose engine failed.
  if (growRefused && !outcome.ok && outcome.kind !== 'timeout') outcome = stoppedAt('memory', data.limits);
  const response = outcome.ok ? unwrapResponse(outcome.value, responseBrand) : undefined;
  if (outcome.ok && response) outcome = withFields(outcome, { value: response.body, response });
  let reusable = sandbox.stats().modules === 1 && nullPageClean();
  // The next run must find its whole memory limit free. Garbage this run left in cycles may hold it
  // (see Sandbox.hasRoom), and a context that ran out of memory may be left half-done: disposing
  // the slot frees it all; if even that leaves no room, a new thread will.
  if (reusable && (growRefused || !sandbox.hasRoom(data.limits.memoryBytes))) {
    sandbox.recycle();
    reusable = sandbox.hasRoom(data.limits.memoryBytes);
  }
  const { compiles } = sandbox.stats();
  halted = !reusable;
  post({ type: 'done', outcome, console: consoleLines, compiles, reusable });
}

/** The code of the hooks run here, kept in step with the server's copy (see CodeCache). */
const codes = new CodeCache<string>(data.codeCacheChars, (code) => code.length);

port.on('message', (message: ToWorker) => {
  if (message.type === 'run') {
    // On arrival, for every run (also one the server takes back later), as the server did on sending.
    if (message.code !== undefined) codes.put(message.cacheKey, message.code);
    else message.code = codes.use(message.cacheKey);
    queue.push(message);
    void drain();
  } else {
    settle(message);
  }
});

void sandbox.warm().then(
  () => {
    // Grow the heap once to hold a run's whole limit beside the hardened context: a run's large
    // allocations then sit below what the context keeps, and freeing them leaves one piece free.
    sandbox.hasRoom(data.limits.memoryBytes);
    post({ type: 'ready' });
  },
  () => process.exit(1),
);
