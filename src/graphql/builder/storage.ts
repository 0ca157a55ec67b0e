import { storageStats } from '../../storage/service.js';
import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';

const typeDefs = /* GraphQL */ `
  "One table, its partitions summed (byte and row counts are Float: they may pass 2^31)."
  type TableStorage {
    "The SQL name."
    name: String!
    "The name people gave an application table; null for Trellis's own tables."
    label: String
    "Live rows, estimated from the database's statistics."
    rows: Float!
    "Rows deleted or updated whose space is not reusable until a vacuum."
    deadRows: Float!
    "The table with its TOAST data."
    tableBytes: Float!
    indexBytes: Float!
    totalBytes: Float!
    "1 for a plain table; the number of day partitions on PostgreSQL."
    partitions: Int!
    lastVacuum: DateTime
    lastAutovacuum: DateTime
  }

  type IndexStorage {
    name: String!
    table: String!
    bytes: Float!
  }

  "Rows kept of one log (exactly counted), the oldest, and the retention setting (e.g. 30d)."
  type LogStorage {
    rows: Float!
    oldest: DateTime
    retention: String!
  }

  type RunLogStorage {
    rows: Float!
    oldest: DateTime
    retention: String!
    "Runs kept that did not end ok: every failure is kept."
    failures: Float!
    "Successful runs of each hook kept whole per minute (TRELLIS_RUN_LOG_SAMPLES_PER_MINUTE)."
    samplesPerMinute: Int!
  }

  type RunStatsStorage {
    rows: Float!
    oldest: DateTime
    retention: String!
    periodMs: Int!
  }

  "The database's storage (admin only): what trellis db stats prints."
  type StorageStats {
    "embedded (PGlite in the data folder) or postgres."
    database: String!
    "pg_database_size: the files of every relation."
    databaseBytes: Float!
    "The embedded database's whole data folder, write-ahead log included; null on PostgreSQL."
    dataFolderBytes: Float
    "Largest first."
    tables: [TableStorage!]!
    indexes: [IndexStorage!]!
    runLog: RunLogStorage!
    runStats: RunStatsStorage!
    mcpAudit: LogStorage!
  }

  extend type Query {
    "Size per table and index, rows, dead rows, last vacuums, the run log's and audit's rows with their retention, the data folder's size (admin only)."
    storageStats: StorageStats!
  }
`;

export const storageModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      storageStats: (_s, _args, ctx) => storageStats(ctx.services.ctx, requireUser(ctx)),
    },
  },
};
