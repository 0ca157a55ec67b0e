import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** A timestamp column: read as Date, written as Date or ISO string, defaulted by the database. */
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;
/** A column with a database default: optional on insert. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;

export interface AppTable {
  id: string;
  name: string;
  settings: Json<AppSettings>;
  created_at: CreatedAt;
}

export interface AppSettings {
  corsOrigins: string[];
  theme: ThemeSettings;
}

export interface ThemeSettings {
  colors: Record<string, string>;
  shell: Record<string, string>;
}

export interface RolesTable {
  id: string;
  name: string;
  description: Defaulted<string>;
  permissions: Json<string[]>;
  builtin: Defaulted<boolean>;
  created_at: CreatedAt;
}

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  role_id: string;
  is_owner: Defaulted<boolean>;
  disabled: Defaulted<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface UserSessionsTable {
  token_hash: string;
  user_id: string;
  expires_at: Timestamp;
  created_at: CreatedAt;
}

/** One role's data-access rules on one table (D32); `rules` is a `TableAccessRules`. */
export interface TableAccessTable {
  table_id: string;
  role_id: string;
  rules: ColumnType<unknown, string, string>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface RoleFeaturesTable {
  role_id: string;
  feature_id: string;
}

export interface FeaturesTable {
  id: string;
  name: string;
  description: Defaulted<string>;
  custom_code: string;
  status: 'draft' | 'published';
  version: number;
  published_version: number | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface FeatureVersionsTable {
  feature_id: string;
  version: number;
  custom_code: string;
  status: 'draft' | 'published';
  code_sha256: string;
  author_id: string | null;
  created_at: CreatedAt;
}

export interface HooksTable {
  id: string;
  name: string;
  type: string;
  table_id: string | null;
  content: string;
  content_sha256: string;
  version: number;
  created_by: string | null;
  updated_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface HookVersionsTable {
  hook_id: string;
  version: number;
  content: string;
  content_sha256: string;
  author_id: string | null;
  created_at: CreatedAt;
}

export interface AppTablesTable {
  id: string;
  name: string;
  sql_name: string;
  description: Defaulted<string>;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface AppFieldsTable {
  id: string;
  table_id: string;
  name: string;
  type: string;
  required: Defaulted<boolean>;
  unique: Defaulted<boolean>;
  reference_table_id: string | null;
  description: Defaulted<string>;
  /** What people read for the field; empty: its name. */
  label: Defaulted<string>;
  position: number;
  created_at: CreatedAt;
}

export interface MenusTable {
  id: string;
  name: string;
  entries: Json<MenuEntry[]>;
  position: Defaulted<number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface MenuEntry {
  label: string;
  path: string;
}

export interface EnvVarsTable {
  id: string;
  name: string;
  value_ciphertext: string;
  created_by: string | null;
  updated_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface McpApiKeysTable {
  id: string;
  app_id: string;
  user_id: string;
  name: string;
  key_prefix: string;
  key_hash: string;
  scopes: Json<string[]>;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface IntegrationKeysTable {
  id: string;
  app_id: string;
  name: string;
  client_id: string;
  key_hash: string;
  created_by: string | null;
  created_at: CreatedAt;
  /** The role whose data-access rules the integration acts with; null: every record (D32). */
  role_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AccessTokensTable {
  token_hash: string;
  client_id: string;
  expires_at: Timestamp;
  created_at: CreatedAt;
}

export interface AuditEventsTable {
  id: Generated<number>;
  at: CreatedAt;
  actor_id: string | null;
  source: string;
  action: string;
  resource_type: string;
  resource_id: string | null;
  details: Json<Record<string, unknown>>;
}

export interface McpAuditLogsTable {
  id: Generated<number>;
  at: CreatedAt;
  key_id: string | null;
  user_id: string | null;
  tool: string;
  arguments: Json<Record<string, unknown>>;
  outcome: string;
  error: string | null;
  duration_ms: number;
  code_sha256: string | null;
  /** The HTTP request of the call (x-request-id); null for entries stored before. */
  request_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface HookRunsTable {
  id: Generated<number>;
  hook_id: string | null;
  hook_name: string;
  trigger: string;
  started_at: CreatedAt;
  duration_ms: number;
  outcome: string;
  console: Json<string[]>;
  error: string | null;
  /** What the run received and answered (redacted, at most RUN_DETAIL_MAX_CHARS of JSON each); null for runs stored before. */
  input: ColumnType<unknown, string | null | undefined, string | null>;
  output: ColumnType<unknown, string | null | undefined, string | null>;
  /** How long the run waited for a hook worker; null for runs stored before. */
  queued_ms: number | null;
  /** The HTTP request that caused the run (x-request-id); null when none did or stored before. */
  request_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The HTTP status a webhook answered (500 when its code failed); null for save hooks and runs stored before. */
  http_status: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Runs of one hook in one period, counted by every replica (migration 0008). */
export interface HookRunStatsTable {
  /** The hook's _id as it ran (kept after the hook is deleted). */
  hook_id: string;
  period_start: Timestamp;
  hook_name: string;
  period_ms: number;
  runs: number;
  refused: number;
  errors: number;
  timeouts: number;
  memory: number;
  duration_p50_ms: number;
  duration_p95_ms: number;
  duration_max_ms: number;
  queued_p95_ms: number;
  queued_max_ms: number;
}

export interface MailOutboxTable {
  id: Generated<number>;
  to_address: string;
  subject: string;
  body: string;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  sent_at: NullableTimestamp;
  last_error: string | null;
  created_at: CreatedAt;
}

export interface Database {
  app: AppTable;
  roles: RolesTable;
  users: UsersTable;
  user_sessions: UserSessionsTable;
  role_features: RoleFeaturesTable;
  table_access: TableAccessTable;
  features: FeaturesTable;
  feature_versions: FeatureVersionsTable;
  hooks: HooksTable;
  hook_versions: HookVersionsTable;
  app_tables: AppTablesTable;
  app_fields: AppFieldsTable;
  menus: MenusTable;
  env_vars: EnvVarsTable;
  mcp_api_keys: McpApiKeysTable;
  integration_keys: IntegrationKeysTable;
  access_tokens: AccessTokensTable;
  audit_events: AuditEventsTable;
  mcp_audit_logs: McpAuditLogsTable;
  hook_runs: HookRunsTable;
  hook_run_stats: HookRunStatsTable;
  mail_outbox: MailOutboxTable;
}

export type Row<T extends keyof Database> = Selectable<Database[T]>;
export type NewRow<T extends keyof Database> = Insertable<Database[T]>;
export type RowUpdate<T extends keyof Database> = Updateable<Database[T]>;
