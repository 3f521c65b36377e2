// dreams.mjs drives teammem's Dreams API with the official TypeScript SDK
// (@anthropic-ai/sdk, the package directory in TEAMMEM_TS_SDK) and prints
// one JSON object on stdout: {"checks":[{name, got, want}]}. The Go test
// (dreams_tssdk_test.go) starts the server and asserts every check; this
// script decides nothing itself, so a thrown error is reported as a check.
//
// Environment: TEAMMEM_URL; the keys TEAMMEM_KEY_OWNER, TEAMMEM_KEY_READONLY
// (the owner's, read-only) and TEAMMEM_KEY_STRANGER (another org's);
// TEAMMEM_STORE (a memory store of the org, no dream yet) and
// TEAMMEM_DONE_DREAM (a completed dream of it).
// TEAMMEM_TS_CHECKS names internal/testing/tssdk/checks.mjs, the shared helpers.
import { pathToFileURL } from 'node:url';

const { caught, check, client: sdkClient, refusal, report } = await import(pathToFileURL(process.env.TEAMMEM_TS_CHECKS).href);
const env = process.env;
const client = (key) => sdkClient(env.TEAMMEM_URL, key);

const owner = client(env.TEAMMEM_KEY_OWNER);
const store = env.TEAMMEM_STORE;
const only = (extra = {}) => ({ inputs: [{ type: 'memory_store', memory_store_id: store }], model: 'm1', ...extra });

async function run() {
  const d = await owner.beta.dreams.create(only());
  check('create: shape', {
    prefix: d.id.slice(0, 4), type: d.type, status: d.status, outputs: d.outputs, model: d.model,
    instructions: d.instructions, behavior: d.output_behavior, error: d.error, session_id: d.session_id,
    ended_at: d.ended_at, archived_at: d.archived_at, review: d.review, usage: d.usage,
  }, {
    prefix: 'drm_', type: 'dream', status: 'pending', outputs: [], model: { id: 'm1', speed: 'standard' },
    instructions: null, behavior: { type: 'create_new' }, error: null, session_id: null, ended_at: null,
    archived_at: null, review: { state: 'none', at: null },
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  });
  const got = await owner.beta.dreams.retrieve(d.id);
  check('retrieve', got.id === d.id && got.created_at === d.created_at, true);

  const held = await owner.beta.dreams.create(only({
    model: { id: 'm2', speed: 'standard' }, instructions: 'merge duplicates',
    output_behavior: { type: 'update_existing', memory_store_id: store },
  }));
  check('update_existing', [held.output_behavior, held.instructions, held.model.id],
    [{ type: 'update_existing', memory_store_id: store }, 'merge duplicates', 'm2']);
  const conflict = await caught(() => owner.beta.dreams.create(only({ output_behavior: { type: 'update_existing', memory_store_id: store } })));
  check('409 held store', refusal(conflict), { class: 'ConflictError', status: 409, type: 'conflict_error' });
  check('409 names the holder', String(conflict?.message).includes(held.id), true);
  check('409 x-should-retry', conflict?.headers?.get?.('x-should-retry') ?? null, 'false');

  const canceled = await owner.beta.dreams.cancel(held.id);
  check('cancel pending', canceled.status, 'canceled');
  const again = await owner.beta.dreams.cancel(held.id);
  check('cancel again', again.ended_at === canceled.ended_at, true);
  check('archive pending: 400', refusal(await caught(() => owner.beta.dreams.archive(d.id))),
    { class: 'BadRequestError', status: 400, type: 'invalid_request_error' });
  check('cancel completed: 400', refusal(await caught(() => owner.beta.dreams.cancel(env.TEAMMEM_DONE_DREAM))),
    { class: 'BadRequestError', status: 400, type: 'invalid_request_error' });
  const a1 = await owner.beta.dreams.archive(env.TEAMMEM_DONE_DREAM);
  const a2 = await owner.beta.dreams.archive(env.TEAMMEM_DONE_DREAM);
  check('archive completed, twice', [a1.archived_at !== null, a2.archived_at === a1.archived_at, a1.review.state], [true, true, 'pending']);

  // Four dreams now: d (pending), held (canceled), the completed one (archived), and this one.
  await owner.beta.dreams.create(only());
  const ids = [];
  for await (const x of owner.beta.dreams.list({ limit: 1, include_archived: true })) ids.push(x.id);
  check('auto-paging walks every dream once', [ids.length, new Set(ids).size], [4, 4]);
  const count = async (params) => (await owner.beta.dreams.list({ limit: 100, ...params })).data.length;
  check('list hides archived', await count({}), 3);
  check('statuses', await count({ statuses: ['canceled', 'completed'], include_archived: true }), 2);
  check('statuses, one', await count({ statuses: ['pending'] }), 2);
  const all = (await owner.beta.dreams.list({ limit: 100, include_archived: true })).data;
  const oldest = all[all.length - 1].created_at;
  check('created_at[gt]', await count({ 'created_at[gt]': oldest, include_archived: true }), 3);
  check('created_at[lt]', await count({ 'created_at[lt]': oldest, include_archived: true }), 0);

  const bad = async (body) => refusal(await caught(() => owner.beta.dreams.create(body)));
  const invalid = { class: 'BadRequestError', status: 400, type: 'invalid_request_error' };
  check('400 model not allowed', await bad(only({ model: 'other' })), invalid);
  check('400 instructions too long', await bad(only({ instructions: 'x'.repeat(4097) })), invalid);
  check('400 speed', await bad(only({ model: { id: 'm1', speed: 'fast' } })), invalid);
  check('400 two stores', await bad({ inputs: [only().inputs[0], only().inputs[0]], model: 'm1' }), invalid);
  check('404 session', await bad(only({ inputs: [only().inputs[0], { type: 'sessions', session_ids: ['sesn_00112233445566778899aabbccddeeff'] }] })),
    { class: 'NotFoundError', status: 404, type: 'not_found_error' });

  const ro = client(env.TEAMMEM_KEY_READONLY);
  check('403 read-only update_existing', refusal(await caught(() => ro.beta.dreams.create(only({ output_behavior: { type: 'update_existing', memory_store_id: store } })))),
    { class: 'PermissionDeniedError', status: 403, type: 'permission_error' });
  const stranger = client(env.TEAMMEM_KEY_STRANGER);
  const notFound = { class: 'NotFoundError', status: 404, type: 'not_found_error' };
  check('404 other org store', refusal(await caught(() => stranger.beta.dreams.create(only()))), notFound);
  check('404 other org dream', refusal(await caught(() => stranger.beta.dreams.retrieve(d.id))), notFound);
  check('404 other org cancel', refusal(await caught(() => stranger.beta.dreams.cancel(d.id))), notFound);
  check('other org lists none', (await stranger.beta.dreams.list({ include_archived: true })).data.length, 0);
}

await report(run);
