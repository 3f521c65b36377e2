// dreams_live.mjs drives the Dreams lifecycle with the official TypeScript
// SDK (@anthropic-ai/sdk, the package directory in TEAMMEM_TS_SDK) against
// the built server running dreams on its fake model, and prints one JSON
// object on stdout: {"checks":[{name, got, want}]}. The Go test
// (dreams_sdks_e2e_test.go) starts everything and asserts every check; a
// thrown error is reported as a check.
//
// Environment: TEAMMEM_URL and TEAMMEM_KEY (an owner's key); TEAMMEM_STORE,
// TEAMMEM_TARGET and TEAMMEM_SLOW, three memory stores without dreams (the
// fake model holds every turn of a dream of TEAMMEM_SLOW); TEAMMEM_MODEL_URL,
// the fake model, whose GET /held?marker=slow-ts says how many such turns
// it holds.
// TEAMMEM_TS_CHECKS names internal/testing/tssdk/checks.mjs, the shared helpers.
import { pathToFileURL } from 'node:url';

const { caught, check, client, refusal, report } = await import(pathToFileURL(process.env.TEAMMEM_TS_CHECKS).href);
const env = process.env;
const c = client(env.TEAMMEM_URL, env.TEAMMEM_KEY);

// until polls fn until it returns a truthy value, for at most 30 s.
async function until(what, fn) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const final = new Set(['completed', 'failed', 'canceled']);
const finished = (id) => until(`dream ${id} to end`, async () => {
  const d = await c.beta.dreams.retrieve(id);
  return final.has(d.status) && d;
});
const params = (store, extra = {}) => ({ inputs: [{ type: 'memory_store', memory_store_id: store }], model: 'claude-fake', ...extra });
const update = (store) => params(store, { output_behavior: { type: 'update_existing', memory_store_id: store } });

async function run() {
  const fresh = await finished((await c.beta.dreams.create(params(env.TEAMMEM_STORE))).id);
  check('create_new completed', [fresh.status, fresh.outputs.length, fresh.outputs[0]?.memory_store_id !== env.TEAMMEM_STORE,
    fresh.review?.state, fresh.usage.input_tokens, fresh.ended_at !== null, fresh.error],
  ['completed', 1, true, 'pending', 812, true, null]);
  const upd = await finished((await c.beta.dreams.create(update(env.TEAMMEM_TARGET))).id);
  check('update_existing completed', [upd.status, upd.outputs, upd.output_behavior, upd.review?.state],
    ['completed', [{ type: 'memory_store', memory_store_id: env.TEAMMEM_TARGET }],
      { type: 'update_existing', memory_store_id: env.TEAMMEM_TARGET }, 'none']);

  // A running dream whose model turn is held by the fake model.
  const slow = await c.beta.dreams.create(update(env.TEAMMEM_SLOW));
  await until('the slow dream\'s model turn', async () => Number(await (await fetch(`${env.TEAMMEM_MODEL_URL}/held?marker=slow-ts`)).text()) > 0);
  check('held dream is running', (await c.beta.dreams.retrieve(slow.id)).status, 'running');
  const conflict = await caught(() => c.beta.dreams.create(update(env.TEAMMEM_SLOW)));
  check('409 store held by the running dream', [refusal(conflict), String(conflict?.message).includes(slow.id)],
    [{ class: 'ConflictError', status: 409, type: 'conflict_error' }, true]);
  check('archive running: 400', refusal(await caught(() => c.beta.dreams.archive(slow.id))),
    { class: 'BadRequestError', status: 400, type: 'invalid_request_error' });
  const canceled = await c.beta.dreams.cancel(slow.id);
  check('cancel running', [canceled.status, canceled.ended_at !== null], ['canceled', true]);
  check('stays canceled', (await finished(slow.id)).status, 'canceled');

  // Lists of this script's three dreams: filters and one dream a page.
  const since = { 'created_at[gte]': fresh.created_at };
  const ids = async (p) => {
    const out = [];
    for await (const d of c.beta.dreams.list({ limit: 1, ...since, ...p })) out.push(d.id);
    return out.sort();
  };
  check('list pages', await ids({}), [fresh.id, upd.id, slow.id].sort());
  check('list completed', await ids({ statuses: ['completed'] }), [fresh.id, upd.id].sort());
  check('list canceled', await ids({ statuses: ['canceled'] }), [slow.id]);
  check('list created_at[gt] the first', await ids({ 'created_at[gt]': fresh.created_at }), [upd.id, slow.id].sort());

  // Archive: idempotent, hidden from the default list.
  const a1 = await c.beta.dreams.archive(fresh.id);
  const a2 = await c.beta.dreams.archive(fresh.id);
  check('archive twice', [a1.archived_at !== null, a2.archived_at === a1.archived_at], [true, true]);
  await c.beta.dreams.archive(slow.id);
  check('list hides archived', await ids({}), [upd.id]);
  check('include_archived', (await ids({ include_archived: true })).length, 3);

  const invalid = { class: 'BadRequestError', status: 400, type: 'invalid_request_error' };
  check('cancel completed: 400', refusal(await caught(() => c.beta.dreams.cancel(upd.id))), invalid);
  check('model not allowed: 400', refusal(await caught(() => c.beta.dreams.create(params(env.TEAMMEM_STORE, { model: 'other' })))), invalid);
  check('unknown dream: 404', refusal(await caught(() => c.beta.dreams.retrieve('drm_00000000000000000000000000000000'))),
    { class: 'NotFoundError', status: 404, type: 'not_found_error' });
}

await report(run);
