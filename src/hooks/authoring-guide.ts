import { DB_CALLS_PER_RUN, FETCHES_PER_RUN } from '../runtime/capabilities.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../tables/record-schema.js';
import { HOOK_GLOBALS, type HookGlobal } from './code-validation.js';

/** The limits one hook run has, as the deployment configures them. */
export interface HookLimits {
  cpuMs: number;
  timeoutMs: number;
  memoryMb: number;
}

/** What an author (often an AI agent) needs to write a hook without guessing. */
export type HookAuthoringGuide = {
  shape: string;
  globals: HookGlobal[];
  db: { method: string; returns: string }[];
  dbRules: string[];
  types: { type: string; when: string; receives: string; returns: string; example: string }[];
  limits: string[];
};

const DB_METHODS = [
  { method: "db.find(table, filter?, { sort?, limit?, offset? }?)", returns: `Promise<{ items: record[], total: number }>; limit defaults to ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT}` },
  { method: 'db.get(table, _id)', returns: 'Promise<record | null>' },
  { method: 'db.create(table, data)', returns: 'Promise<record> with its generated _id' },
  { method: 'db.update(table, _id, data)', returns: 'Promise<record>: only the given fields change, null clears one' },
  { method: 'db.delete(table, _id)', returns: 'Promise<boolean>' },
];

const DB_RULES = [
  "table is the table's name (any letter case) or _id, e.g. 'Orders'.",
  "A filter maps field names to conditions: { amount: { gt: 100 }, status: { in: ['open', 'paid'] } }, with _and / _or arrays; the operators are eq, ne, in, lt, lte, gt, gte, contains and isNull, by field type. sort is [{ field: 'amount', direction: 'DESC' }].",
  'Data is validated like a GraphQL write: a wrong type, a missing required field or an unknown field rejects the call with an Error naming the field; await it inside try/catch to handle it.',
  'Writes through db run no hooks. In a beforeSave hook that names db, they commit or roll back with the record being saved.',
  "db is the application's own code: it reaches every record of every table, whatever the data-access rules of the user's role (they bound what people and integrations reach through GraphQL and the application page).",
];

const BEFORE_SAVE = `async function checkOrder(instance) {
  if (typeof instance.amount === 'number' && instance.amount < 0) throw new Error('The amount must not be negative');
  instance.title = String(instance.title ?? '').trim();
}`;

const AFTER_SAVE = `async function notifyErp(instance) {
  const answer = await fetch('https://erp.example.com/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + env.ERP_TOKEN },
    body: JSON.stringify({ id: instance._id, amount: instance.amount }),
  });
  if (!answer.ok) console.warn('ERP answered', answer.status);
}`;

/** How old a signed call may be, in seconds: Stripe's own default tolerance. Older ones may be replays. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const WEBHOOK = `async function payConfirm(instance) {
  const sig = Object.fromEntries((headers['stripe-signature'] || '').split(',').map((kv) => kv.split('=')));
  const expected = crypto.hmac('sha256', env.PAY_SECRET, sig.t + '.' + request.rawBody);
  if (!sig.v1 || !crypto.timingSafeEqual(expected, sig.v1)) return respond(401, { error: 'bad signature' });
  // A signed call older than ${SIGNATURE_TOLERANCE_SECONDS / 60} minutes (Stripe's tolerance) may be a replay.
  if (!(Math.abs(Date.now() / 1000 - Number(sig.t)) <= ${SIGNATURE_TOLERANCE_SECONDS})) return respond(401, { error: 'signature too old' });
  await db.update('Orders', instance.orderId, { paid: true });
  return { ok: true };
}`;

/**
 * The hook authoring guide, part of get_feature_authoring_guide's answer and of the README: the
 * exact API inside a hook, what each hook type receives and may return with an example that
 * validates, and the limits of a run.
 */
export function hookAuthoringGuide(limits: HookLimits): HookAuthoringGuide {
  return {
    shape:
      'A hook is ONE async function, `async function name(instance) { ... }` or `async (instance) => { ... }`, with nothing before or after it, at most 200 KB. It runs in strict mode in a sandbox (QuickJS): no require, import, process, eval or Function; built-ins are frozen and nothing survives from one run to the next.',
    globals: HOOK_GLOBALS.map((global) => ({ ...global })),
    db: DB_METHODS.map((entry) => ({ ...entry })),
    dbRules: [...DB_RULES],
    types: [
      {
        type: 'beforeSave',
        when: 'Before a record of its table (tableId) is created or updated, inside the save.',
        receives: 'instance: the record as it will be saved (change it in place to change what is saved); user: the author ({ _id, email, role, via? }: role is the name of their role; via is the name of the integration key acting for the user with x-userid) or null.',
        returns: 'Nothing. Throw an Error to reject the save: its message reaches the caller as a BAD_INPUT error and nothing is saved.',
        example: BEFORE_SAVE,
      },
      {
        type: 'afterSave',
        when: 'After a record of its table is saved and committed; it never holds up the answer, and runs of one record keep the order of its saves.',
        receives: 'instance: the saved record with its _id; user: the author or null.',
        returns: 'Nothing; a throw is only recorded in the run log. Call external systems with fetch here.',
        example: AFTER_SAVE,
      },
      {
        type: 'webHook',
        when: `On every POST /api/webhook/<name> (no built-in authentication: check a signature or token, and a signed timestamp within ${SIGNATURE_TOLERANCE_SECONDS / 60} minutes so that an old call cannot be replayed). The designer's test run can sign its body as Stripe or GitHub do with an environment variable's value.`,
        receives:
          'instance: the parsed body (JSON, a form as an object, text as a string, null without a body); headers; request: { method, url, query, headers, rawBody, contentType }, rawBody being the bytes providers sign.',
        returns:
          'A JSON value (200), undefined (204), or respond(status, body, headers) to choose the answer. A throw answers 500 HOOK_FAILED with a generic message.',
        example: WEBHOOK,
      },
    ],
    limits: [
      `${limits.cpuMs} ms of computation and ${limits.timeoutMs} ms in all per run (awaited fetch and db calls included); ${limits.memoryMb} MB of memory.`,
      `At most ${FETCHES_PER_RUN} fetch requests and ${DB_CALLS_PER_RUN} db calls per run. fetch reaches public addresses only (private and loopback ones need TRELLIS_HOOK_EGRESS_ALLOW), answers of at most 1 MB, 3 redirects.`,
      'console lines (at most 100 of 500 characters) and the error of each failed run, of a few successful runs a minute and of the latest run are in the run log, readable by admins; environment values are redacted from them. Every run is counted (hookRunStats).',
    ],
  };
}
