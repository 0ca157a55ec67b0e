import type { GraphQLSchema } from 'graphql';
import { sql } from 'kysely';
import type { FeatureSchema, RecordOperation } from '../features/graphql-documents.js';
import type { PlatformContext } from '../platform/context.js';
import { ReadValue } from '../platform/read-cache.js';
import { loadRecordTables } from '../tables/records.js';
import { applicationSchema, sectionedSdl } from './application-schema.js';
import { quotedEnumValues } from './closed-sets.js';
import { builderModules } from './builder/index.js';
import { recordsModule, type RecordTypeNames, type TakenNames } from './records/index.js';
import { assignRecordNames } from './records/names.js';
import { buildBuilderSchema, extendBuilderSchema } from './schema.js';

/** The schema served at `/graphql` and the version that names it (document caches key on it). */
export interface VersionedSchema {
  readonly schema: GraphQLSchema;
  readonly version: number;
}

export interface BuiltSchema extends VersionedSchema {
  /** What the tables looked like when the schema was built. */
  readonly fingerprint: string;
  /** The generated names of each table's type and operations, by table _id. */
  readonly recordNames: ReadonlyMap<string, RecordTypeNames>;
  /** Each table's name, by _id. */
  readonly tableNames: ReadonlyMap<string, string>;
}

/** Configuration changes in a row after which a request takes the schema it has rather than wait again. */
const MAX_REFRESHES_PER_REQUEST = 3;

/**
 * The schema served at `/graphql`: the builder operations plus the operations generated from the
 * application's tables; the application's operations alone (what integration tokens see); and the
 * SDL of both (what `get_graphql_schema` returns). The schema is rebuilt when the tables change:
 * after any configuration change (on this or another replica) the next request compares a cheap
 * fingerprint of `app_tables`/`app_fields` and rebuilds only if it moved; the integrations' schema
 * and the SDL are derived once per version.
 */
export class GraphQLSchemaProvider {
  private builder: { schema: GraphQLSchema; taken: TakenNames } | undefined;
  private built: BuiltSchema | undefined;
  private printed: { version: number; sdl: string } | undefined;
  private forFeatures: { version: number; featureSchema: FeatureSchema } | undefined;
  private forIntegrations: VersionedSchema | undefined;
  /** The schema as checked against the tables since the last configuration change. */
  private readonly checked: ReadValue<BuiltSchema>;

  constructor(private readonly ctx: PlatformContext) {
    this.checked = new ReadValue(ctx.changes, { topics: ['config'] });
  }

  /**
   * The builder's own schema, which the tables' operations extend, and the names it takes; built on
   * first use, not at start (it costs ~90 ms of a start).
   */
  private get builderSchema(): { schema: GraphQLSchema; taken: TakenNames } {
    if (!this.builder) {
      const schema = buildBuilderSchema(builderModules);
      this.builder = { schema, taken: takenNames(schema) };
    }
    return this.builder;
  }

  private get builderTaken(): TakenNames {
    return this.builderSchema.taken;
  }

  /** The current schema; after a configuration change, checked against the tables first. */
  async current(): Promise<BuiltSchema> {
    for (let attempt = 1; ; attempt += 1) {
      const built = await this.checked.load(() => this.refresh());
      // A change that came during the check left it unstored: check again, a few times at most.
      if (this.checked.get() === built || attempt >= MAX_REFRESHES_PER_REQUEST) return built;
    }
  }

  /** The current schema with the root fields generated from tables: what feature documents are checked against. */
  async featureSchema(): Promise<FeatureSchema> {
    const { schema, version, recordNames, tableNames } = await this.current();
    if (this.forFeatures?.version !== version) {
      this.forFeatures = {
        version,
        featureSchema: {
          schema,
          applicationFields: this.applicationFields(schema),
          recordOperations: recordOperations(recordNames, tableNames),
          asServed: (document) => quotedEnumValues(schema, document),
        },
      };
    }
    return this.forFeatures.featureSchema;
  }

  /**
   * The current schema without the builder operations, which need a signed-in user: the
   * application's generated operations only, as integration tokens see and call them.
   */
  async integrationSchema(): Promise<VersionedSchema> {
    return this.integrationSchemaOf(await this.current());
  }

  /** The generated GraphQL names of a table's type and operations (listOrders, createOrders, ...). */
  async recordNames(tableId: string): Promise<RecordTypeNames | undefined> {
    return (await this.current()).recordNames.get(tableId);
  }

  /** The SDL of the current schema: the application's operations first, then the builder operations apart. */
  async sdl(): Promise<string> {
    const { schema, version } = await this.current();
    if (this.printed?.version !== version) this.printed = { version, sdl: sectionedSdl(schema, this.integrationSchemaOf({ schema, version }).schema) };
    return this.printed.sdl;
  }

  private integrationSchemaOf({ schema, version }: VersionedSchema): VersionedSchema {
    if (this.forIntegrations?.version !== version) this.forIntegrations = { version, schema: applicationSchema(schema, this.applicationFields(schema)) };
    return this.forIntegrations;
  }

  /** The schema's root fields generated from tables: those the builder's own schema does not declare. */
  private applicationFields(schema: GraphQLSchema): Set<string> {
    const taken = this.builderTaken;
    return new Set([
      ...Object.keys(schema.getQueryType()?.getFields() ?? {}).filter((name) => !taken.queries.has(name)),
      ...Object.keys(schema.getMutationType()?.getFields() ?? {}).filter((name) => !taken.mutations.has(name)),
    ]);
  }

  /** The schema built last if the tables' fingerprint has not moved since, else one built now. */
  private async refresh(): Promise<BuiltSchema> {
    const fingerprint = await tablesFingerprint(this.ctx);
    if (this.built?.fingerprint !== fingerprint) {
      const [tables, hidden] = await Promise.all([loadRecordTables(this.ctx.db), hiddenFields(this.ctx)]);
      const schema = extendBuilderSchema(this.builderSchema.schema, recordsModule(tables, this.builderTaken, hidden));
      const recordNames = assignRecordNames(tables, this.builderTaken);
      const tableNames = new Map(tables.map((table) => [table.id, table.name]));
      this.built = { schema, version: (this.built?.version ?? 0) + 1, fingerprint, recordNames, tableNames };
    }
    return this.built;
  }
}

/** Changes whenever a table is created, renamed, deleted or gains a field, or a role's hidden fields change. */
async function tablesFingerprint(ctx: PlatformContext): Promise<string> {
  const result = await sql<{ fingerprint: string }>`
    select concat_ws(':',
      (select count(*) from app_tables), (select max(updated_at) from app_tables),
      (select count(*) from app_fields), (select max(created_at) from app_fields),
      (${hiddenFieldsQuery})) as fingerprint`.execute(ctx.db);
  return result.rows[0]!.fingerprint;
}

/** Fields some role may not read, as `tableId.field`, in one string. */
const hiddenFieldsQuery = sql`select coalesce(string_agg(distinct a.table_id || '.' || h, ','), '') from table_access a, jsonb_array_elements_text(a.rules -> 'hiddenFields') as h`;

/**
 * Fields some role may not read (D32): they read as null for that role, so their output type is
 * nullable even when the field is required.
 */
async function hiddenFields(ctx: PlatformContext): Promise<ReadonlySet<string>> {
  const result = await sql<{ hidden: string }>`select (${hiddenFieldsQuery}) as hidden`.execute(ctx.db);
  return new Set(result.rows[0]!.hidden.split(',').filter(Boolean));
}

/** What each generated root field does with which table's records. */
function recordOperations(names: ReadonlyMap<string, RecordTypeNames>, tableNames: ReadonlyMap<string, string>): Map<string, RecordOperation> {
  const operations = new Map<string, RecordOperation>();
  for (const [tableId, tableOperations] of names) {
    const table = tableNames.get(tableId) ?? tableId;
    operations.set(tableOperations.list, { tableId, table, action: 'read' });
    operations.set(tableOperations.get, { tableId, table, action: 'read' });
    operations.set(tableOperations.create, { tableId, table, action: 'create' });
    operations.set(tableOperations.update, { tableId, table, action: 'update' });
    operations.set(tableOperations.delete, { tableId, table, action: 'delete' });
  }
  return operations;
}

function takenNames(schema: GraphQLSchema): TakenNames {
  return {
    types: new Set(Object.keys(schema.getTypeMap())),
    queries: new Set(Object.keys(schema.getQueryType()?.getFields() ?? {})),
    mutations: new Set(Object.keys(schema.getMutationType()?.getFields() ?? {})),
  };
}
