import type { ChangeBus } from './change-bus.js';

/**
 * Answers of configuration reads, valid until the next configuration or auth change on any replica
 * (or for `ttlMs` at most, should a notification be lost). A read that overlapped a change is not
 * stored: each entry is tagged with the generation its read started in.
 */
export class ReadCache<T> {
  private readonly entries = new Map<string, { value: T; storedAt: number }>();
  private generationCounter = 0;

  constructor(
    changes: ChangeBus,
    private readonly ttlMs = 30_000,
    private readonly maxEntries = 1000,
  ) {
    const clear = () => {
      this.generationCounter += 1;
      this.entries.clear();
    };
    changes.on('config', clear);
    changes.on('auth', clear);
  }

  /** The current generation; pass it back to `set` for a read that started now. */
  generation(): number {
    return this.generationCounter;
  }

  get(key: string, now = Date.now()): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.storedAt <= this.ttlMs) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: T, generation: number, now = Date.now()): void {
    if (generation !== this.generationCounter) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, storedAt: now });
  }
}
