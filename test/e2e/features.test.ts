import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, postJson, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

type Gql = ReturnType<typeof graphqlClient>;

const FEATURE = '_id name description customCode status version publishedVersion createdBy updatedBy createdAt updatedAt roleIds';
const CREATE = `mutation($_id: ID, $name: String!, $description: String, $customCode: String!, $status: FeatureStatus) {
  createFeature(_id: $_id, name: $name, description: $description, customCode: $customCode, status: $status) { ${FEATURE} }
}`;
const UPDATE = `mutation($_id: ID!, $name: String, $customCode: String, $status: FeatureStatus) {
  updateFeature(_id: $_id, name: $name, customCode: $customCode, status: $status) { ${FEATURE} }
}`;
const DELETE = 'mutation($_id: ID!, $confirm: Boolean!) { deleteFeature(_id: $_id, confirm: $confirm) }';
const GET = `query($_id: ID!) { feature(_id: $_id) { ${FEATURE} } }`;
const VERSIONS = 'query($_id: ID!) { featureVersions(_id: $_id) { version status customCode codeSha256 authorId createdAt } }';
const ONE_MB = 1_048_576;

/** Valid feature code that shows `text`. */
const page = (text: string) => `export default function Page() { return <p>${text}</p>; }`;
/** Valid feature code of exactly `bytes` bytes of UTF-8, padded with a comment that ends in `last`. */
function paddedPage(bytes: number, last = 'a'): string {
  const head = `${page('big')}\n// `;
  return head + 'a'.repeat(bytes - head.length - Buffer.byteLength(last)) + last;
}

let server: TestServer;
let ownerGql: Gql;
let designerGql: Gql;
let viewerGql: Gql;
let ownerId: string;
let designerId: string;
let roleIds: Record<string, string>;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const db = () => server.server.services.ctx.db;

async function signInAs(email: string, role: string): Promise<Gql> {
  await gqlData(ownerGql, 'mutation($e: String!, $r: String!) { createUser(email: $e, password: "password-123", role: $r) { _id } }', {
    e: email,
    r: role,
  });
  const session = await postJson(`${server.url}/api/auth/login`, { email, password: 'password-123' });
  return graphqlClient(server.url, session.body.token);
}

async function createFeature(gql: Gql, variables: Record<string, unknown>) {
  return (await gqlData(gql, CREATE, { customCode: page('hi'), ...variables })).createFeature;
}

async function rowCounts() {
  const count = async (table: 'features' | 'feature_versions' | 'role_features' | 'audit_events') =>
    Number((await db().selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return {
    features: await count('features'),
    featureVersions: await count('feature_versions'),
    roleFeatures: await count('role_features'),
    auditEvents: await count('audit_events'),
  };
}

function expectError(result: HttpResult, code: string, status: number, fragment: string) {
  expect(result.body.errors?.[0]?.extensions).toMatchObject({ code, status });
  expect(result.body.errors[0].message).toContain(fragment);
}

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  ownerId = (await gqlData(ownerGql, '{ me { _id } }')).me._id;
  const roles = await gqlData(ownerGql, '{ roles { _id name } }');
  roleIds = Object.fromEntries(roles.roles.map((r: { _id: string; name: string }) => [r.name, r._id]));
  designerGql = await signInAs('designer@example.com', 'designer');
  designerId = (await gqlData(designerGql, '{ me { _id } }')).me._id;
  viewerGql = await signInAs('viewer@example.com', 'viewer');
  await createFeature(ownerGql, { _id: 'existing-feature', name: 'Existing Feature' });
});
afterAll(async () => server?.close());

describe('createFeature', () => {
  it('creates a draft as version 1 with an _id derived from the name and a version row holding the code hash', async () => {
    const code = 'export default function Sales() { return <h1>Sales</h1>; }';
    const created = await createFeature(ownerGql, { name: 'Sales Dashboard', description: 'Numbers', customCode: code });
    expect(created).toMatchObject({
      _id: 'sales-dashboard',
      name: 'Sales Dashboard',
      description: 'Numbers',
      customCode: code,
      status: 'draft',
      version: 1,
      publishedVersion: null,
      createdBy: ownerId,
      updatedBy: ownerId,
    });
    expect(created.createdAt).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect((await gqlData(ownerGql, GET, { _id: 'sales-dashboard' })).feature).toEqual(created);
    const versions = await db().selectFrom('feature_versions').selectAll().where('feature_id', '=', 'sales-dashboard').execute();
    expect(versions).toEqual([
      expect.objectContaining({ version: 1, status: 'draft', custom_code: code, code_sha256: sha256(code), author_id: ownerId }),
    ]);
  });

  it('makes a derived _id unique when the slug is already used', async () => {
    const first = await createFeature(ownerGql, { name: 'Report!' });
    const second = await createFeature(ownerGql, { name: 'Report?' });
    expect([first._id, second._id]).toEqual(['report', 'report-2']);
  });

  it('derives an _id from a name with accents and symbols', async () => {
    expect((await createFeature(ownerGql, { name: 'Équipe & Café' }))._id).toBe('equipe-cafe');
  });

  it('keeps the _id the caller gives', async () => {
    expect((await createFeature(ownerGql, { _id: 'my-own-id-7', name: 'Chosen id' }))._id).toBe('my-own-id-7');
  });

  it('publishes at creation when status is published', async () => {
    const created = await createFeature(ownerGql, { name: 'Published at birth', status: 'published' });
    expect(created).toMatchObject({ status: 'published', version: 1, publishedVersion: 1 });
  });

  it('lets the built-in admin role and the creator role see a new feature', async () => {
    const byOwner = await createFeature(ownerGql, { name: 'Owner made' });
    expect(byOwner.roleIds).toEqual([roleIds.admin]);
    const byDesigner = await createFeature(designerGql, { name: 'Designer made' });
    expect([...byDesigner.roleIds].sort()).toEqual([roleIds.admin, roleIds.designer].sort());
    const stored = await db().selectFrom('role_features').select('role_id').where('feature_id', '=', byDesigner._id).execute();
    expect(stored.map((r) => r.role_id).sort()).toEqual([roleIds.admin, roleIds.designer].sort());
  });

  it('records an audit event with the author, the source and the code hash', async () => {
    const code = 'export default () => <span>audited</span>;';
    const created = await createFeature(designerGql, { name: 'Audited feature', customCode: code });
    const event = await db().selectFrom('audit_events').selectAll().where('resource_id', '=', created._id).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ action: 'feature.create', resource_type: 'feature', actor_id: designerId, source: 'graphql' });
    expect(event.details).toMatchObject({ name: 'Audited feature', status: 'draft', version: 1, codeSha256: sha256(code) });
  });

  it('accepts code of exactly 1 MB', async () => {
    const created = await createFeature(ownerGql, { name: 'Exactly one megabyte', customCode: paddedPage(ONE_MB) });
    expect(created.customCode).toHaveLength(ONE_MB);
  });

  it.each([
    ['an _id with capitals', { _id: 'Bad-Id', name: 'Bad id 1' }, 'BAD_INPUT', 400, '_id: must be 2 to 64 characters'],
    ['a one-character _id', { _id: 'a', name: 'Bad id 2' }, 'BAD_INPUT', 400, '_id:'],
    ['an _id starting with -', { _id: '-abc', name: 'Bad id 3' }, 'BAD_INPUT', 400, '_id:'],
    ['an _id of 65 characters', { _id: 'a'.repeat(65), name: 'Bad id 4' }, 'BAD_INPUT', 400, '_id:'],
    ['an _id already used', { _id: 'existing-feature', name: 'Other name' }, 'CONFLICT', 409, "_id: a feature with _id 'existing-feature'"],
    ['an empty name', { name: '  ' }, 'BAD_INPUT', 400, 'name: must not be empty'],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, 'BAD_INPUT', 400, 'name: must be at most 100'],
    ['a name taken in another case', { name: 'EXISTING feature' }, 'CONFLICT', 409, 'name: a feature named'],
    ['an unknown status', { name: 'Bad status', status: 'live' }, 'BAD_INPUT', 400, 'FeatureStatus must be one of draft, published'],
    ['code of 1 MB + 1 byte', { name: 'Too big', customCode: paddedPage(ONE_MB + 1) }, 'PAYLOAD_TOO_LARGE', 413, 'at most 1 MB (1048576 bytes'],
    ['code over 1 MB in UTF-8 bytes only', { name: 'Too big utf8', customCode: paddedPage(ONE_MB + 1, 'é') }, 'PAYLOAD_TOO_LARGE', 413, 'customCode:'],
  ])('refuses %s and writes nothing', async (_case, variables, code, status, fragment) => {
    const before = await rowCounts();
    const result = await ownerGql(CREATE, { customCode: page('refused'), ...variables });
    expectError(result, code, status, fragment);
    expect(await rowCounts()).toEqual(before);
  });

  it("refuses a viewer with FORBIDDEN naming 'features:write' and writes nothing", async () => {
    const before = await rowCounts();
    expectError(await viewerGql(CREATE, { name: 'Viewer made', customCode: page('viewer') }), 'FORBIDDEN', 403, "'features:write'");
    expect(await rowCounts()).toEqual(before);
  });
});

describe('updateFeature versioning', () => {
  it('adds a version for each change of code or status and moves publishedVersion only when publishing', async () => {
    const { _id } = await createFeature(ownerGql, { name: 'Versioned', customCode: page('v1') });
    const saves = [
      [{ customCode: page('v2') }, { version: 2, status: 'draft', publishedVersion: null }],
      [{ status: 'published' }, { version: 3, status: 'published', publishedVersion: 3 }],
      [{ customCode: page('v4'), status: 'draft' }, { version: 4, status: 'draft', publishedVersion: 3 }],
      [{ customCode: page('v5'), status: 'published' }, { version: 5, status: 'published', publishedVersion: 5 }],
      [{ customCode: page('v6') }, { version: 6, status: 'published', publishedVersion: 6 }],
    ] as const;
    for (const [change, expected] of saves) {
      expect((await gqlData(ownerGql, UPDATE, { _id, ...change })).updateFeature).toMatchObject(expected);
    }
    const versions = (await gqlData(ownerGql, VERSIONS, { _id })).featureVersions;
    expect(versions.map((v: { version: number; status: string; customCode: string }) => [v.version, v.status, v.customCode])).toEqual([
      [6, 'published', page('v6')],
      [5, 'published', page('v5')],
      [4, 'draft', page('v4')],
      [3, 'published', page('v2')],
      [2, 'draft', page('v2')],
      [1, 'draft', page('v1')],
    ]);
    expect(versions[0]).toMatchObject({ codeSha256: sha256(page('v6')), authorId: ownerId });
  });

  it('keeps the version when a save changes neither code nor status', async () => {
    const { _id } = await createFeature(ownerGql, { name: 'Renamed later', customCode: page('same') });
    const updated = (await gqlData(ownerGql, UPDATE, { _id, name: 'Renamed now', customCode: page('same'), status: 'draft' })).updateFeature;
    expect(updated).toMatchObject({ name: 'Renamed now', version: 1 });
    expect((await gqlData(ownerGql, VERSIONS, { _id })).featureVersions).toHaveLength(1);
  });

  it('records the last author as updatedBy and the previous code is returned to the service caller', async () => {
    const { _id } = await createFeature(ownerGql, { name: 'Handed over', customCode: page('before') });
    const updated = (await gqlData(designerGql, UPDATE, { _id, customCode: page('after') })).updateFeature;
    expect(updated).toMatchObject({ createdBy: ownerId, updatedBy: designerId, customCode: page('after') });
    const owner = await server.server.services.access.principalForUser(ownerId, 'system');
    const result = await server.server.services.features.updateFeature(owner, { _id, customCode: page('again') });
    expect(result.previousCode).toBe(page('after'));
    expect(result.feature.version).toBe(3);
  });

  it.each([
    ['code of 1 MB + 1 byte', { customCode: paddedPage(ONE_MB + 1) }, 'PAYLOAD_TOO_LARGE', 413, 'customCode:'],
    ['a name another feature has', { name: 'existing FEATURE' }, 'CONFLICT', 409, 'name:'],
    ['an unknown status', { status: 'archived' }, 'BAD_INPUT', 400, 'FeatureStatus must be one of draft, published'],
  ])('refuses %s and keeps the stored feature', async (_case, change, code, status, fragment) => {
    const { _id } = await createFeature(ownerGql, { name: `Guarded ${_case}`, customCode: page('kept') });
    const before = await rowCounts();
    expectError(await ownerGql(UPDATE, { _id, ...change }), code, status, fragment);
    expect(await rowCounts()).toEqual(before);
    expect((await gqlData(ownerGql, GET, { _id })).feature).toMatchObject({ customCode: page('kept'), version: 1 });
  });

  it('answers NOT_FOUND for an unknown feature', async () => {
    expectError(await ownerGql(UPDATE, { _id: 'no-such-feature', customCode: page('x') }), 'NOT_FOUND', 404, "'no-such-feature'");
  });
});

describe('listing and reading features', () => {
  it('filters by a case-insensitive substring of the name or the _id and orders by name', async () => {
    await createFeature(ownerGql, { _id: 'zeta-inventory', name: 'Alpha stock' });
    await createFeature(ownerGql, { _id: 'inv-beta', name: 'Beta things' });
    await createFeature(ownerGql, { _id: 'gamma', name: 'Gamma INVENTORY' });
    const found = await gqlData(viewerGql, 'query($q: String) { features(query: $q) { _id name } }', { q: 'InV' });
    expect(found.features.map((f: { _id: string }) => f._id)).toEqual(['zeta-inventory', 'inv-beta', 'gamma']);
  });

  it('treats % and _ in the query as plain characters', async () => {
    const found = await gqlData(viewerGql, 'query($q: String) { features(query: $q) { _id } }', { q: '%' });
    expect(found.features).toEqual([]);
  });

  it('lists every feature without a query, with its roles', async () => {
    const all = (await gqlData(viewerGql, '{ features { _id name roleIds } }')).features;
    const names = all.map((f: { name: string }) => f.name);
    expect(names.length).toBe((await rowCounts()).features);
    expect(all.find((f: { _id: string }) => f._id === 'existing-feature').roleIds).toEqual([roleIds.admin]);
  });

  it('answers NOT_FOUND for an unknown feature and its versions', async () => {
    expectError(await ownerGql(GET, { _id: 'missing' }), 'NOT_FOUND', 404, "Feature 'missing'");
    expectError(await ownerGql(VERSIONS, { _id: 'missing' }), 'NOT_FOUND', 404, "Feature 'missing'");
  });
});

describe('deleteFeature', () => {
  it('deletes the feature with its versions and role grants, audits it, and leaves menus alone', async () => {
    const { _id } = await createFeature(ownerGql, { name: 'Doomed', customCode: page('v1') });
    await gqlData(ownerGql, UPDATE, { _id, customCode: page('v2') });
    await db()
      .insertInto('menus')
      .values({ id: 'menu-doomed', name: 'Doomed menu', entries: JSON.stringify([{ label: 'Doomed', path: `/feature/${_id}` }]), updated_at: new Date() })
      .execute();
    expect((await gqlData(ownerGql, DELETE, { _id, confirm: true })).deleteFeature).toBe(true);
    expectError(await ownerGql(GET, { _id }), 'NOT_FOUND', 404, _id);
    expect(await db().selectFrom('feature_versions').select('version').where('feature_id', '=', _id).execute()).toEqual([]);
    expect(await db().selectFrom('role_features').select('role_id').where('feature_id', '=', _id).execute()).toEqual([]);
    const menu = await db().selectFrom('menus').selectAll().where('id', '=', 'menu-doomed').executeTakeFirstOrThrow();
    expect(menu.entries).toEqual([{ label: 'Doomed', path: `/feature/${_id}` }]);
    const event = await db().selectFrom('audit_events').selectAll().where('action', '=', 'feature.delete').where('resource_id', '=', _id).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ actor_id: ownerId, details: { name: 'Doomed' } });
  });

  it('refuses confirm: false with BAD_INPUT and deletes nothing', async () => {
    const before = await rowCounts();
    expectError(await ownerGql(DELETE, { _id: 'existing-feature', confirm: false }), 'BAD_INPUT', 400, 'confirm: must be true to delete');
    expect(await rowCounts()).toEqual(before);
  });

  it.each([
    ['a designer', () => designerGql],
    ['a viewer', () => viewerGql],
  ])("refuses %s with FORBIDDEN naming 'config:delete' and deletes nothing", async (_who, client) => {
    const before = await rowCounts();
    expectError(await client()(DELETE, { _id: 'existing-feature', confirm: true }), 'FORBIDDEN', 403, "'config:delete'");
    expect(await rowCounts()).toEqual(before);
  });

  it('answers NOT_FOUND for an unknown feature', async () => {
    expectError(await ownerGql(DELETE, { _id: 'never-was', confirm: true }), 'NOT_FOUND', 404, "'never-was'");
  });
});
