import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

/**
 * Migrations in the order they run. Never edit one that has shipped: add the next. Kysely's
 * Migrator takes a PostgreSQL advisory lock, so replicas starting at once run each one once.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_configuration_model': {
    async up(db) {
      await runStatements(
        db,
        `
        create table app (
          id text primary key,
          name text not null,
          settings jsonb not null,
          created_at timestamptz not null default now()
        );
        create table roles (
          id text primary key,
          name text not null unique,
          description text not null default '',
          permissions jsonb not null,
          builtin boolean not null default false,
          created_at timestamptz not null default now()
        );
        create table users (
          id text primary key,
          email text not null unique,
          name text not null default '',
          password_hash text not null,
          role_id text not null references roles(id),
          is_owner boolean not null default false,
          disabled boolean not null default false,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        );
        create table user_sessions (
          token_hash text primary key,
          user_id text not null references users(id) on delete cascade,
          expires_at timestamptz not null,
          created_at timestamptz not null default now()
        );
        create index user_sessions_user on user_sessions(user_id);
        create table features (
          id text primary key,
          name text not null,
          description text not null default '',
          custom_code text not null,
          status text not null check (status in ('draft', 'published')),
          version integer not null,
          published_version integer,
          created_by text references users(id) on delete set null,
          updated_by text references users(id) on delete set null,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        );
        create unique index features_name on features(lower(name));
        create table feature_versions (
          feature_id text not null references features(id) on delete cascade,
          version integer not null,
          custom_code text not null,
          status text not null,
          code_sha256 text not null,
          author_id text references users(id) on delete set null,
          created_at timestamptz not null default now(),
          primary key (feature_id, version)
        );
        create table role_features (
          role_id text not null references roles(id) on delete cascade,
          feature_id text not null references features(id) on delete cascade,
          primary key (role_id, feature_id)
        );
        create table app_tables (
          id text primary key,
          name text not null,
          sql_name text not null unique,
          description text not null default '',
          created_by text references users(id) on delete set null,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        );
        create unique index app_tables_name on app_tables(lower(name));
        create table app_fields (
          id text primary key,
          table_id text not null references app_tables(id) on delete cascade,
          name text not null,
          type text not null,
          required boolean not null default false,
          "unique" boolean not null default false,
          reference_table_id text references app_tables(id),
          description text not null default '',
          position integer not null,
          created_at timestamptz not null default now()
        );
        create unique index app_fields_name on app_fields(table_id, lower(name));
        create table hooks (
          id text primary key,
          name text not null,
          type text not null,
          table_id text references app_tables(id),
          content text not null,
          content_sha256 text not null,
          version integer not null,
          created_by text references users(id) on delete set null,
          updated_by text references users(id) on delete set null,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        );
        create unique index hooks_name on hooks(lower(name));
        create index hooks_table_type on hooks(table_id, type);
        create table hook_versions (
          hook_id text not null references hooks(id) on delete cascade,
          version integer not null,
          content text not null,
          content_sha256 text not null,
          author_id text references users(id) on delete set null,
          created_at timestamptz not null default now(),
          primary key (hook_id, version)
        );
        create table menus (
          id text primary key,
          name text not null,
          entries jsonb not null,
          position integer not null default 0,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        );
        create unique index menus_name on menus(lower(name));
        create table env_vars (
          id text primary key,
          name text not null unique,
          value_ciphertext text not null,
          created_by text references users(id) on delete set null,
          updated_by text references users(id) on delete set null,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        );
        create table mcp_api_keys (
          id text primary key,
          app_id text not null,
          user_id text not null references users(id) on delete cascade,
          name text not null,
          key_prefix text not null,
          key_hash text not null unique,
          scopes jsonb not null,
          expires_at timestamptz not null,
          revoked_at timestamptz,
          last_used_at timestamptz,
          created_at timestamptz not null default now()
        );
        create index mcp_api_keys_user on mcp_api_keys(user_id);
        create table integration_keys (
          id text primary key,
          app_id text not null,
          name text not null,
          client_id text not null unique,
          key_hash text not null,
          created_by text references users(id) on delete set null,
          created_at timestamptz not null default now()
        );
        create unique index integration_keys_name on integration_keys(lower(name));
        create table access_tokens (
          token_hash text primary key,
          client_id text not null references integration_keys(client_id) on delete cascade,
          expires_at timestamptz not null,
          created_at timestamptz not null default now()
        );
        create table audit_events (
          id bigserial primary key,
          at timestamptz not null default now(),
          actor_id text,
          source text not null,
          action text not null,
          resource_type text not null,
          resource_id text,
          details jsonb not null
        );
        create index audit_events_at on audit_events(at);
        create table mcp_audit_logs (
          id bigserial primary key,
          at timestamptz not null default now(),
          key_id text,
          user_id text,
          tool text not null,
          arguments jsonb not null,
          outcome text not null,
          error text,
          duration_ms integer not null,
          code_sha256 text
        );
        create index mcp_audit_logs_at on mcp_audit_logs(at);
        create table hook_runs (
          id bigserial primary key,
          hook_id text references hooks(id) on delete set null,
          hook_name text not null,
          trigger text not null,
          started_at timestamptz not null default now(),
          duration_ms integer not null,
          outcome text not null,
          console jsonb not null,
          error text
        );
        create index hook_runs_hook on hook_runs(hook_id, started_at);
        create table mail_outbox (
          id bigserial primary key,
          to_address text not null,
          subject text not null,
          body text not null,
          attempts integer not null default 0,
          next_attempt_at timestamptz not null default now(),
          sent_at timestamptz,
          last_error text,
          created_at timestamptz not null default now()
        );
        create index mail_outbox_pending on mail_outbox(next_attempt_at) where sent_at is null;
      `,
      );
    },
  },
  // What a run received and answered, for the run log of those who may read run details.
  '0002_hook_run_details': {
    async up(db) {
      await runStatements(
        db,
        `
        alter table hook_runs add column input jsonb;
        alter table hook_runs add column output jsonb;
        alter table hook_runs add column queued_ms integer
      `,
      );
    },
  },
  // The HTTP request (x-request-id) behind each MCP call and hook run, to join them with the logs.
  '0003_request_ids': {
    async up(db) {
      await runStatements(
        db,
        `
        alter table mcp_audit_logs add column request_id text;
        alter table hook_runs add column request_id text
      `,
      );
    },
  },
  // The run log's foreign key checked every inserted row (a third of each batch's cost, D29); a
  // trigger on hooks does what `on delete set null` did, for deletes of any kind (a table's too).
  '0004_hook_runs_unlinked': {
    async up(db) {
      await runStatements(
        db,
        `
        alter table hook_runs drop constraint if exists hook_runs_hook_id_fkey;
        create function trellis_unlink_hook_runs() returns trigger language plpgsql as $$ begin update hook_runs set hook_id = null where hook_id = old.id; return old; end $$;
        create trigger hooks_unlink_runs after delete on hooks for each row execute function trellis_unlink_hook_runs()
      `,
      );
    },
  },
  // Data access by role (issue 19, D32). Tables that exist keep today's behaviour, written out as
  // ALL for every non-admin role; `trellis_access_check` aborts a write whose new row breaks its rule
  // (PostgreSQL's WITH CHECK) inside the one INSERT or UPDATE statement, so nothing is half written.
  '0005_table_access': {
    async up(db) {
      await runStatements(
        db,
        `
        create table table_access (
          table_id text not null references app_tables(id) on delete cascade,
          role_id text not null references roles(id) on delete cascade,
          rules jsonb not null,
          updated_at timestamptz not null default now(),
          primary key (table_id, role_id)
        );
        create index table_access_role on table_access(role_id);
        alter table integration_keys add column role_id text references roles(id);
        insert into table_access (table_id, role_id, rules)
          select t.id, r.id, '{"read":{"level":"ALL"},"create":{"level":"ALL"},"update":{"level":"ALL"},"delete":{"level":"ALL"},"hiddenFields":[],"readOnlyFields":[]}'::jsonb
          from app_tables t cross join roles r where not (r.permissions ? 'admin');
        create function trellis_access_check(allowed boolean, action text) returns boolean language plpgsql as $$ begin if allowed then return true; end if; raise exception 'trellis access check: % outside the rule', action using errcode = '42501'; end $$
      `,
      );
    },
  },
  // The HTTP status a webhook answered (issue 20): a run whose code answered 4xx or 5xx with
  // respond() is told apart from one that succeeded. Null for save hooks and for runs stored before.
  '0006_hook_run_http_status': {
    async up(db) {
      await runStatements(db, `alter table hook_runs add column http_status integer`);
    },
  },
  // What people read for a field (issue 20): 'Due date' for dueDate; empty reads as the field's name.
  '0007_field_labels': {
    async up(db) {
      await runStatements(db, `alter table app_fields add column label text not null default ''`);
    },
  },
  // The run log keeps failures and a sample of successes (issue 22); every run is counted here, per
  // hook and period. Rows are upserted by each replica (counts add up), so the key is (hook, period).
  // An index on the run log's time lets retention delete the oldest rows in small batches.
  '0008_hook_run_stats': {
    async up(db) {
      await runStatements(
        db,
        `
        create table hook_run_stats (
          hook_id text not null,
          period_start timestamptz not null,
          hook_name text not null,
          period_ms integer not null,
          runs integer not null,
          refused integer not null,
          errors integer not null,
          timeouts integer not null,
          memory integer not null,
          duration_p50_ms integer not null,
          duration_p95_ms integer not null,
          duration_max_ms integer not null,
          queued_p95_ms integer not null,
          queued_max_ms integer not null,
          primary key (hook_id, period_start)
        );
        create index hook_run_stats_period on hook_run_stats(period_start);
        create index hook_runs_started on hook_runs(started_at)
      `,
      );
    },
  },
};

/** Runs a script of `;`-terminated statements one by one (PGlite's extended protocol takes one). */
async function runStatements(db: Kysely<unknown>, script: string): Promise<void> {
  for (const statement of script.split(/;\s*\n/)) {
    if (statement.trim()) await sql.raw(statement).execute(db);
  }
}

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Brings the schema up to date; safe on every start and from several replicas at once. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  if (await upToDate(db)) return;
  const migrator = new Migrator({ db, provider, migrationTableName: 'trellis_migrations', migrationLockTableName: 'trellis_migrations_lock' });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const name = failed ? ` (${failed.migrationName})` : '';
    throw new Error(`Database migration failed${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Whether every migration is applied and no other: then the start needs no lock and no migrator.
 * Kysely's migrator first reads the whole catalog to find its own tables, which costs a third of a
 * second on a fresh embedded database; these two reads of one small table cost a few milliseconds.
 * Anything else (a new folder, a migration to apply, one this version does not know) goes through
 * the migrator, which takes its lock and answers as before.
 */
async function upToDate(db: Kysely<unknown>): Promise<boolean> {
  const { rows: present } = await sql<{ present: boolean }>`select to_regclass('trellis_migrations') is not null as present`.execute(db);
  if (!present[0]?.present) return false;
  const { rows } = await sql<{ name: string }>`select name from trellis_migrations`.execute(db);
  const known = Object.keys(MIGRATIONS);
  return rows.length === known.length && rows.every((row) => known.includes(row.name));
}
