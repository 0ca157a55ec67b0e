import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ChangeBus } from './change-bus.js';
import type { SecretBox } from './crypto.js';
import type { DatabaseHandle, Db } from './db/index.js';
import type { Metrics } from './metrics.js';

/** What every service is built with: infrastructure, no domain knowledge. */
export interface PlatformContext {
  readonly config: Config;
  readonly database: DatabaseHandle;
  readonly db: Db;
  readonly secretBox: SecretBox;
  /** The one application this deployment serves. */
  readonly appId: string;
  readonly logger: Logger;
  /** Invalidates caches on this and every other replica. */
  readonly changes: ChangeBus;
  /** Prometheus metrics, served at /metrics. */
  readonly metrics: Metrics;
}
