// memstores.mjs drives teammem's Memory Stores API with the official
// TypeScript SDK (@anthropic-ai/sdk, the package directory in TEAMMEM_TS_SDK)
// and prints one JSON object on stdout: {"checks":[{name, got, want}]}.
// The Go test (memstores_tssdk_test.go) starts the server, passes its address
// and keys in the environment, and asserts every check; this script decides
// nothing itself, so a thrown error is reported as a check too.
//
// Environment: TEAMMEM_URL and the keys TEAMMEM_KEY_OWNER, TEAMMEM_KEY_VIEWER,
// TEAMMEM_KEY_READONLY (the owner's, read-only);
// TEAMMEM_LIMITED_URL and TEAMMEM_LIMITED_KEY name a second server whose key
// has two write tokens, for the 429 cases.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const sdkDir = process.env.TEAMMEM_TS_SDK;
const sdk = await import(pathToFileURL(path.join(sdkDir, 'index.mjs')).href);
const Anthropic = sdk.default;

const checks = [];

// check records one observation and what the SDK's declarations want.
function check(name, got, want) {
  checks.push({ name, got: got === undefined ? null : got, want });
}

// client is an SDK client on url with key that never retries, so that a
// retryable answer shows as the error it is.
function client(url, key, opts = {}) {
  return new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0, ...opts });
}

// shapeProblems lists how obj differs from a shape of field → type, where a
// type is 'string', 'number', 'object', 'string|null', 'object|null' or a
// literal value in quotes ("'memory'").
function shapeProblems(obj, shape) {
  const out = [];
  if (obj === null || typeof obj !== 'object') return ['not an object'];
  for (const [k, t] of Object.entries(shape)) {
    const v = obj[k];
    const ok = t.split('|').some((alt) => {
      if (alt.startsWith("'")) return v === alt.slice(1, -1);
      if (alt === 'null') return v === null;
      if (alt === 'rfc3339') return typeof v === 'string' && !Number.isNaN(Date.parse(v)) && /T.*(Z|[+-]\d\d:\d\d)$/.test(v);
      if (alt === 'object') return v !== null && typeof v === 'object';
      return typeof v === alt;
    });
    if (!ok) out.push(`${k}: ${JSON.stringify(v)} is not ${t}`);
  }
  return out;
}

// The object shapes of resources/beta/memory-stores/*.d.ts.
const storeShape = {
  id: 'string', type: "'memory_store'", name: 'string', description: 'string', metadata: 'object',
  archived_at: 'rfc3339|null', created_at: 'rfc3339', updated_at: 'rfc3339',
};
const memoryShape = {
  id: 'string', type: "'memory'", path: 'string', content_sha256: 'string', content_size_bytes: 'number',
  memory_store_id: 'string', memory_version_id: 'string', created_at: 'rfc3339', updated_at: 'rfc3339',
};
const versionShape = {
  id: 'string', type: "'memory_version'", memory_id: 'string', memory_store_id: 'string', operation: 'string',
  created_at: 'rfc3339', created_by: 'object',
};

// caught runs fn and returns the error it throws, or null.
async function caught(fn) {
  try {
    await fn();
    return null;
  } catch (err) {
    return err;
  }
}

// rateLimited writes through the limited server until it refuses: a store
// create spends a write token too, so the first refusal may come at the
// create or at a memory write, whichever case runs first.
async function rateLimited(lim, name) {
  let id = null;
  for (let i = 0; i < 4; i++) {
    const err = await caught(async () => {
      if (id === null) {
        id = (await lim.create({ name })).id;
      } else {
        await lim.memories.create(id, { path: `/${i}.md`, content: String(i) });
      }
    });
    if (err) return err;
  }
  return null;
}

// errorInfo is what a test compares of an SDK error: its class, status and
// the error object of the body.
function errorInfo(err) {
  if (err === null) return null;
  return {
    class: err.constructor?.name,
    status: err.status ?? null,
    type: err.error?.error?.type ?? null,
  };
}

// collect drains an auto-paging iterator.
async function collect(page) {
  const out = [];
  for await (const item of page) out.push(item);
  return out;
}

const cases = {};

// stores: every method of client.beta.memoryStores, with auto-paging.
cases.stores = async () => {
  const c = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER);
  const ms = c.beta.memoryStores;
  const s = await ms.create({ name: 'ts notes', description: 'from the TS SDK', metadata: { team: 'a' } });
  check('stores.create shape', shapeProblems(s, storeShape), []);
  check('stores.create fields', [s.name, s.description, s.metadata], ['ts notes', 'from the TS SDK', { team: 'a' }]);
  const got = await ms.retrieve(s.id);
  check('stores.retrieve id', got.id, s.id);
  const up = await ms.update(s.id, { name: 'ts notes 2', metadata: { team: null, owner: 'b' } });
  check('stores.update fields', [up.name, up.metadata], ['ts notes 2', { owner: 'b' }]);
  for (let i = 0; i < 24; i++) await ms.create({ name: `bulk ${i}` });
  const all = await collect(ms.list({ limit: 10 }));
  check('stores.list auto-paging count', all.length, 25);
  check('stores.list auto-paging unique', new Set(all.map((x) => x.id)).size, 25);
  const arch = await ms.archive(s.id);
  check('stores.archive archived_at set', shapeProblems(arch, { ...storeShape, archived_at: 'rfc3339' }), []);
  const live = await collect(ms.list({ limit: 100 }));
  check('stores.list hides archived', live.some((x) => x.id === s.id), false);
  const withArch = await collect(ms.list({ limit: 100, include_archived: true }));
  check('stores.list include_archived', withArch.some((x) => x.id === s.id), true);
  const del = await ms.delete(s.id);
  check('stores.delete', del, { id: s.id, type: 'memory_store_deleted' });
  const gone = await caught(() => ms.retrieve(s.id));
  check('stores.retrieve deleted → NotFoundError', errorInfo(gone), { class: 'NotFoundError', status: 404, type: 'not_found_error' });
};

// memories: every method of .memories, with auto-paging and depth.
cases.memories = async () => {
  const c = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER);
  const ms = c.beta.memoryStores;
  const s = await ms.create({ name: 'ts memories' });
  const m = await ms.memories.create(s.id, { path: '/a/b.md', content: 'hello' });
  check('memories.create shape', shapeProblems(m, memoryShape), []);
  check('memories.create path and store', [m.path, m.memory_store_id], ['/a/b.md', s.id]);
  const got = await ms.memories.retrieve(m.id, { memory_store_id: s.id });
  check('memories.retrieve content', [got.content, got.content_sha256, got.content_size_bytes], ['hello', m.content_sha256, 5]);
  const up = await ms.memories.update(m.id, {
    memory_store_id: s.id, path: '/c.md', content: 'hello again',
    precondition: { type: 'content_sha256', content_sha256: m.content_sha256 },
  });
  check('memories.update keeps the id across a rename', [up.id, up.path], [m.id, '/c.md']);
  for (let i = 0; i < 30; i++) await ms.memories.create(s.id, { path: `/many/d${i % 3}/${i}.md`, content: `n${i}` });
  const all = await collect(ms.memories.list(s.id, { limit: 7 }));
  check('memories.list auto-paging count', all.length, 31);
  check('memories.list items are memories', all.every((x) => x.type === 'memory'), true);
  const top = await collect(ms.memories.list(s.id, { path_prefix: '/many/', depth: 1 }));
  check('memories.list depth=1 prefixes', top.map((x) => [x.type, x.path]), [
    ['memory_prefix', '/many/d0/'], ['memory_prefix', '/many/d1/'], ['memory_prefix', '/many/d2/'],
  ]);
  const del = await ms.memories.delete(m.id, { memory_store_id: s.id });
  check('memories.delete', del, { id: m.id, type: 'memory_deleted' });
  const gone = await caught(() => ms.memories.retrieve(m.id, { memory_store_id: s.id }));
  check('memories.retrieve deleted → NotFoundError', errorInfo(gone), { class: 'NotFoundError', status: 404, type: 'not_found_error' });
};

// versions: every method of .memoryVersions.
cases.versions = async () => {
  const c = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER);
  const ms = c.beta.memoryStores;
  const s = await ms.create({ name: 'ts versions' });
  const m = await ms.memories.create(s.id, { path: '/v.md', content: 'one' });
  await ms.memories.update(m.id, { memory_store_id: s.id, content: 'two' });
  await ms.memories.update(m.id, { memory_store_id: s.id, content: 'three' });
  const vs = await collect(ms.memoryVersions.list(s.id, { memory_id: m.id, limit: 2 }));
  check('memoryVersions.list auto-paging count', vs.length, 3);
  check('memoryVersions.list shape', shapeProblems(vs[0], versionShape), []);
  const first = vs[vs.length - 1];
  check('memoryVersions.list oldest is created', first.operation, 'created');
  const got = await ms.memoryVersions.retrieve(first.id, { memory_store_id: s.id });
  check('memoryVersions.retrieve', [got.id, got.content], [first.id, 'one']);
  const red = await ms.memoryVersions.redact(first.id, { memory_store_id: s.id });
  check('memoryVersions.redact clears', [red.content ?? null, red.path ?? null, red.content_sha256 ?? null, typeof red.redacted_at],
    [null, null, null, 'string']);
};

// errors: the SDK's own error classes for 400, 403, 404, 409 and 429.
cases.errors = async () => {
  const owner = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const viewer = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_VIEWER).beta.memoryStores;
  const s = await owner.create({ name: 'ts errors' });
  const m = await owner.memories.create(s.id, { path: '/e.md', content: 'e' });
  check('viewer create store → PermissionDeniedError', errorInfo(await caught(() => viewer.create({ name: 'no' }))),
    { class: 'PermissionDeniedError', status: 403, type: 'permission_error' });
  const ro = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_READONLY).beta.memoryStores;
  check('read-only key retrieves', errorInfo(await caught(() => ro.memories.retrieve(m.id, { memory_store_id: s.id }))), null);
  check('read-only key update → PermissionDeniedError', errorInfo(await caught(() => ro.memories.update(m.id, { memory_store_id: s.id, content: 'no' }))),
    { class: 'PermissionDeniedError', status: 403, type: 'permission_error' });
  check('viewer delete → PermissionDeniedError', errorInfo(await caught(() => viewer.memories.delete(m.id, { memory_store_id: s.id }))),
    { class: 'PermissionDeniedError', status: 403, type: 'permission_error' });
  const bad = await caught(() => owner.memories.create(s.id, { path: 'relative.md', content: 'x' }));
  check('bad path → BadRequestError', errorInfo(bad), { class: 'BadRequestError', status: 400, type: 'invalid_request_error' });
  const stale = await caught(() => owner.memories.update(m.id, {
    memory_store_id: s.id, content: 'new', precondition: { type: 'content_sha256', content_sha256: 'a'.repeat(64) },
  }));
  check('stale precondition → ConflictError', [errorInfo(stale)?.class, errorInfo(stale)?.status], ['ConflictError', 409]);
  const missing = await caught(() => owner.retrieve('memstore_doesnotexist'));
  check('unknown store → NotFoundError', errorInfo(missing), { class: 'NotFoundError', status: 404, type: 'not_found_error' });
  const lim = client(process.env.TEAMMEM_LIMITED_URL, process.env.TEAMMEM_LIMITED_KEY).beta.memoryStores;
  const limited = await rateLimited(lim, 'ts limited');
  check('second write → RateLimitError', errorInfo(limited), { class: 'RateLimitError', status: 429, type: 'rate_limit_error' });
};

// requestId: the SDK reads the request id from the request-id header, in
// withResponse().request_id, _request_id and APIError.requestID.
cases.requestId = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const { data, request_id: rid } = await ms.create({ name: 'ts request ids' }).withResponse();
  check('withResponse().request_id is set', typeof rid === 'string' && rid.length > 0, true);
  check('_request_id equals request_id', data._request_id, rid);
  const err = await caught(() => ms.retrieve('memstore_doesnotexist'));
  check('APIError.requestID is set', typeof err?.requestID === 'string' && err.requestID.length > 0, true);
};

// retryHints: a non-retryable error says x-should-retry: false, so the SDK
// does not retry a 409; 429 and 503 carry retry-after.
cases.retryHints = async () => {
  let calls = 0;
  const counting = (url, init) => {
    calls++;
    return fetch(url, init);
  };
  const c = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER, { maxRetries: 2, fetch: counting });
  const ms = c.beta.memoryStores;
  const s = await ms.create({ name: 'ts retries' });
  const m = await ms.memories.create(s.id, { path: '/r.md', content: 'r' });
  for (const [name, fn] of [
    ['409', () => ms.memories.create(s.id, { path: '/r.md', content: 'again' })],
    ['400', () => ms.memories.create(s.id, { path: 'bad', content: 'x' })],
    ['404', () => ms.retrieve('memstore_doesnotexist')],
  ]) {
    calls = 0;
    const err = await caught(fn);
    check(`${name} x-should-retry`, err?.headers?.get('x-should-retry') ?? null, 'false');
    check(`${name} sent once though maxRetries is 2`, calls, 1);
  }
  const viewer = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_VIEWER).beta.memoryStores;
  const denied = await caught(() => viewer.memories.delete(m.id, { memory_store_id: s.id }));
  check('403 x-should-retry', denied?.headers?.get('x-should-retry') ?? null, 'false');
  const lim = client(process.env.TEAMMEM_LIMITED_URL, process.env.TEAMMEM_LIMITED_KEY).beta.memoryStores;
  const limited = await rateLimited(lim, 'ts retry-after');
  check('429 retry-after is whole seconds', /^\d+$/.test(limited?.headers?.get('retry-after') ?? ''), true);
  check('429 x-should-retry is not false', limited?.headers?.get('x-should-retry') === 'false', false);
};

// conflicts: the 409 error objects the SDK declares.
cases.conflicts = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const s = await ms.create({ name: 'ts conflicts' });
  const todo = await ms.memories.create(s.id, { path: '/notes/todo.md', content: 'todo' });
  const other = await ms.memories.create(s.id, { path: '/other.md', content: 'other' });
  const body = (err) => {
    const e = err?.error?.error ?? {};
    return { class: err?.constructor?.name, type: e.type ?? null, conflicting_path: e.conflicting_path ?? null, conflicting_memory_id: e.conflicting_memory_id ?? null };
  };
  const path = (p, id) => ({ class: 'ConflictError', type: 'memory_path_conflict_error', conflicting_path: p, conflicting_memory_id: id });
  check('create at a taken path', body(await caught(() => ms.memories.create(s.id, { path: '/notes/todo.md', content: 'x' }))),
    path('/notes/todo.md', todo.id));
  check('create above a memory', body(await caught(() => ms.memories.create(s.id, { path: '/notes', content: 'x' }))),
    path('/notes/todo.md', todo.id));
  check('create below a memory', body(await caught(() => ms.memories.create(s.id, { path: '/notes/todo.md/deeper.md', content: 'x' }))),
    path('/notes/todo.md', todo.id));
  check('rename onto a taken path', body(await caught(() => ms.memories.update(other.id, { memory_store_id: s.id, path: '/notes/todo.md' }))),
    path('/notes/todo.md', todo.id));
  const pre = (err) => [err?.constructor?.name, err?.error?.error?.type ?? null];
  check('stale update precondition', pre(await caught(() => ms.memories.update(todo.id, {
    memory_store_id: s.id, content: 'new', precondition: { type: 'content_sha256', content_sha256: 'a'.repeat(64) },
  }))), ['ConflictError', 'memory_precondition_failed_error']);
  check('stale expected_content_sha256 on delete', pre(await caught(() => ms.memories.delete(todo.id, {
    memory_store_id: s.id, expected_content_sha256: 'a'.repeat(64),
  }))), ['ConflictError', 'memory_precondition_failed_error']);
};

// staleNoop: a stale content_sha256 precondition succeeds when the memory
// already has exactly the requested content and path.
cases.staleNoop = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const s = await ms.create({ name: 'ts stale no-op' });
  const m = await ms.memories.create(s.id, { path: '/n.md', content: 'old' });
  const cur = await ms.memories.update(m.id, { memory_store_id: s.id, content: 'new' });
  const stale = { type: 'content_sha256', content_sha256: m.content_sha256 };
  const same = await caught(() => ms.memories.update(m.id, { memory_store_id: s.id, content: 'new', path: '/n.md', precondition: stale }));
  check('stale precondition, same content and path → ok', errorInfo(same), null);
  const again = await ms.memories.retrieve(m.id, { memory_store_id: s.id });
  check('…and writes no version', again.memory_version_id, cur.memory_version_id);
  const differs = await caught(() => ms.memories.update(m.id, { memory_store_id: s.id, content: 'newer', precondition: stale }));
  check('stale precondition, other content → 409', errorInfo(differs)?.status, 409);
  const moved = await caught(() => ms.memories.update(m.id, { memory_store_id: s.id, content: 'new', path: '/moved.md', precondition: stale }));
  check('stale precondition, other path → 409', errorInfo(moved)?.status, 409);
};

// views: view defaults to basic on create, update and list, to full on
// retrieve; an explicit view wins.
cases.views = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const s = await ms.create({ name: 'ts views' });
  const m = await ms.memories.create(s.id, { path: '/v.md', content: 'viewed' });
  check('create defaults to basic', m.content ?? null, null);
  const up = await ms.memories.update(m.id, { memory_store_id: s.id, content: 'viewed again' });
  check('update defaults to basic', up.content ?? null, null);
  check('basic keeps sha and size', [up.content_sha256.length, up.content_size_bytes], [64, 12]);
  const listed = await collect(ms.memories.list(s.id));
  check('list defaults to basic', listed.map((x) => x.content ?? null), [null]);
  const got = await ms.memories.retrieve(m.id, { memory_store_id: s.id });
  check('retrieve defaults to full', got.content, 'viewed again');
  const full = await ms.memories.create(s.id, { path: '/w.md', content: 'w', view: 'full' });
  check('create with view=full', full.content, 'w');
  const vs = await collect(ms.memoryVersions.list(s.id, { memory_id: m.id }));
  check('versions list defaults to basic', vs.map((x) => x.content ?? null), [null, null]);
  const v = await ms.memoryVersions.retrieve(vs[0].id, { memory_store_id: s.id });
  check('version retrieve defaults to full', v.content, 'viewed again');
};

// createdAt: a memory's created_at stays put across updates and renames.
cases.createdAt = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const s = await ms.create({ name: 'ts created_at' });
  const m = await ms.memories.create(s.id, { path: '/c.md', content: 'one' });
  await new Promise((r) => setTimeout(r, 5)); // times are kept to the microsecond
  const up = await ms.memories.update(m.id, { memory_store_id: s.id, content: 'two' });
  check('update keeps created_at', up.created_at, m.created_at);
  check('update moves updated_at', up.updated_at !== m.updated_at, true);
  const moved = await ms.memories.update(m.id, { memory_store_id: s.id, path: '/d/c.md' });
  check('rename keeps created_at', moved.created_at, m.created_at);
  const listed = await collect(ms.memories.list(s.id));
  check('list shows created_at', listed.map((x) => x.created_at), [m.created_at]);
};

// storeUpdatedAt: a store's updated_at moves with its name, description,
// metadata and archiving, not with its memories.
cases.storeUpdatedAt = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const s = await ms.create({ name: 'ts updated_at' });
  const tick = () => new Promise((r) => setTimeout(r, 5)); // times are kept to the microsecond
  await tick();
  const m = await ms.memories.create(s.id, { path: '/u.md', content: 'u' });
  await ms.memories.update(m.id, { memory_store_id: s.id, content: 'v' });
  await ms.memories.delete(m.id, { memory_store_id: s.id });
  check('memory changes leave the store updated_at', (await ms.retrieve(s.id)).updated_at, s.updated_at);
  await tick();
  const up = await ms.update(s.id, { metadata: { k: 'v' } });
  check('a metadata change moves updated_at', Date.parse(up.updated_at) > Date.parse(s.updated_at), true);
  await tick();
  const arch = await ms.archive(s.id);
  check('archiving moves updated_at', Date.parse(arch.updated_at) > Date.parse(up.updated_at), true);
};

// archived: an archived store's memories can still be read and deleted,
// their versions redacted and the store deleted; creates, updates and
// store updates are refused.
cases.archived = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const s = await ms.create({ name: 'ts archived' });
  const a = await ms.memories.create(s.id, { path: '/a.md', content: 'a' });
  const b = await ms.memories.create(s.id, { path: '/b.md', content: 'b' });
  await ms.memories.update(b.id, { memory_store_id: s.id, content: 'b2' }); // the first version is history now
  await ms.archive(s.id);
  const got = await caught(() => ms.memories.retrieve(a.id, { memory_store_id: s.id }));
  check('archived: retrieve a memory', errorInfo(got), null);
  check('archived: list memories', (await collect(ms.memories.list(s.id))).length, 2);
  const refused = { class: 'BadRequestError', status: 400, type: 'invalid_request_error' };
  check('archived: create refused', errorInfo(await caught(() => ms.memories.create(s.id, { path: '/c.md', content: 'c' }))), refused);
  check('archived: update refused', errorInfo(await caught(() => ms.memories.update(a.id, { memory_store_id: s.id, content: 'x' }))), refused);
  check('archived: store update refused', errorInfo(await caught(() => ms.update(s.id, { name: 'x' }))), refused);
  const del = await caught(() => ms.memories.delete(a.id, { memory_store_id: s.id }));
  check('archived: delete a memory', errorInfo(del), null);
  const vs = await collect(ms.memoryVersions.list(s.id, { memory_id: b.id }));
  const red = await caught(() => ms.memoryVersions.redact(vs[vs.length - 1].id, { memory_store_id: s.id }));
  check('archived: redact a version', errorInfo(red), null);
  const sdel = await caught(() => ms.delete(s.id));
  check('archived: delete the store', errorInfo(sdel), null);
};

// lengths: store name 1–255, description ≤ 1,024, metadata key 1–64 and
// value ≤ 512, all in characters (here of three bytes each).
cases.lengths = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const w = (n) => '€'.repeat(n);
  const ok = await caught(() => ms.create({ name: w(255), description: w(1024), metadata: { [w(64)]: w(512) } }));
  check('lengths at the limits, in characters', errorInfo(ok), null);
  const bad = { class: 'BadRequestError', status: 400, type: 'invalid_request_error' };
  check('name of 256 characters', errorInfo(await caught(() => ms.create({ name: w(256) }))), bad);
  check('description of 1025 characters', errorInfo(await caught(() => ms.create({ name: 'x', description: w(1025) }))), bad);
  check('metadata key of 65 characters', errorInfo(await caught(() => ms.create({ name: 'x', metadata: { [w(65)]: 'v' } }))), bad);
  check('metadata value of 513 characters', errorInfo(await caught(() => ms.create({ name: 'x', metadata: { k: w(513) } }))), bad);
};

// actors: api_actor.api_key_id is an "apikey_…" id and user_actor.user_id
// a "user_…" id; the versions filter takes the former.
cases.actors = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const s = await ms.create({ name: 'ts actors' });
  const m = await ms.memories.create(s.id, { path: '/a.md', content: 'one' });
  await ms.memories.update(m.id, { memory_store_id: s.id, content: 'two' });
  const vs = await collect(ms.memoryVersions.list(s.id, { memory_id: m.id }));
  const by = vs[vs.length - 1].created_by;
  check('created_by is an api_actor', by.type, 'api_actor');
  check('api_key_id is an apikey_ id', /^apikey_[0-9a-f]{32}$/.test(by.api_key_id ?? ''), true);
  const filtered = await collect(ms.memoryVersions.list(s.id, { api_key_id: by.api_key_id }));
  check('versions filtered by that api_key_id', filtered.length, 2);
  const red = await ms.memoryVersions.redact(vs[vs.length - 1].id, { memory_store_id: s.id });
  check('redacted_by is a user_actor with a user_ id', [red.redacted_by?.type, /^user_[1-9][0-9]*$/.test(red.redacted_by?.user_id ?? '')], ['user_actor', true]);
};

// unsupported: what the SDKs declare and teammem deliberately does not do
// answers a clear error (workspace_id) or an honest empty answer
// (service_account_id: teammem has no service accounts).
cases.unsupported = async () => {
  const ms = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER).beta.memoryStores;
  const err = await caught(() => ms.create({ name: 'ws', workspace_id: 'wrkspc_011CZkZaBF1tNoB5wlCeusgy' }));
  check('workspace_id → BadRequestError', errorInfo(err), { class: 'BadRequestError', status: 400, type: 'invalid_request_error' });
  check('workspace_id message names it', /workspace_id/.test(err?.error?.error?.message ?? ''), true);
  const s = await ms.create({ name: 'ts unsupported' });
  await ms.memories.create(s.id, { path: '/a.md', content: 'a' });
  check('service_account_id filter → no versions', (await collect(ms.memoryVersions.list(s.id, { service_account_id: 'svcacct_x' }))).length, 0);
};

// toolset: the SDK's agent toolset for memories (SessionMemoryStores) runs
// a session against teammem: it downloads a store, pushes a local edit and
// pulls a remote change in a sync, sends a local delete at the end, and a
// store attached read-only pulls but never pushes. Its warnings are
// reported, so a refusal it swallowed shows as a failed check.
cases.toolset = async () => {
  const fs = await import('node:fs/promises');
  const os = await import('node:os');
  const { SessionMemoryStores } = await import(pathToFileURL(path.join(sdkDir, 'tools', 'agent-toolset', 'memories.mjs')).href);
  const warnings = [];
  const logger = { error: (m, o) => warnings.push(`${m} ${JSON.stringify(o)}`), warn: (m, o) => warnings.push(`${m} ${JSON.stringify(o)}`), info() {}, debug() {} };
  const c = client(process.env.TEAMMEM_URL, process.env.TEAMMEM_KEY_OWNER, { logger, logLevel: 'warn' });
  const ms = c.beta.memoryStores;
  const s = await ms.create({ name: 'ts toolset' });
  const a = await ms.memories.create(s.id, { path: '/notes/a.md', content: 'a1' });
  const b = await ms.memories.create(s.id, { path: '/notes/b.md', content: 'b1' });
  await ms.memories.create(s.id, { path: '/gone.md', content: 'soon deleted' });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'teammem-toolset-'));
  try {
    const mount = path.join(dir, 'mnt', 'store');
    const session = (access, mountPath) => ({ resources: [{ type: 'memory_store', memory_store_id: s.id, access, mount_path: mountPath }] });
    const rw = new SessionMemoryStores(c, { workdir: dir, syncIntervalMs: 5000 });
    await rw.download(session('read_write', mount));
    const read = (rel) => fs.readFile(path.join(mount, rel), 'utf8').catch(() => null);
    check('toolset: download', [await read('notes/a.md'), await read('notes/b.md'), await read('gone.md')], ['a1', 'b1', 'soon deleted']);
    await fs.writeFile(path.join(mount, 'notes', 'a.md'), 'a2 local');
    await fs.writeFile(path.join(mount, 'new.md'), 'new local');
    await ms.memories.update(b.id, { memory_store_id: s.id, content: 'b2 remote' });
    await new Promise((r) => setTimeout(r, 5200)); // the toolset syncs at most every 5 s
    await rw.syncIfDue();
    const byPath = async () => Object.fromEntries((await collect(ms.memories.list(s.id, { view: 'full', limit: 20 }))).map((m) => [m.path, m.content]));
    let remote = await byPath();
    check('toolset: sync pushed the local edit and the new file', [remote['/notes/a.md'], remote['/new.md']], ['a2 local', 'new local']);
    check('toolset: sync pulled the remote change', await read('notes/b.md'), 'b2 remote');
    check('toolset: the edit kept its memory id', (await ms.memories.retrieve(a.id, { memory_store_id: s.id })).content, 'a2 local');
    await fs.rm(path.join(mount, 'gone.md'));
    await rw.finish();
    remote = await byPath();
    check('toolset: finish sent the local delete', '/gone.md' in remote, false);
    await rw.dispose();
    const roMount = path.join(dir, 'mnt', 'readonly');
    const ro = new SessionMemoryStores(c, { workdir: dir, syncIntervalMs: 5000 });
    await ro.download(session('read_only', roMount));
    check('toolset: read-only download', await fs.readFile(path.join(roMount, 'notes', 'a.md'), 'utf8'), 'a2 local');
    check('toolset: read-only roots', ro.readOnlyRoots.length, 1);
    await fs.writeFile(path.join(roMount, 'notes', 'a.md'), 'never pushed');
    await ro.finish();
    await ro.dispose();
    remote = await byPath();
    check('toolset: read-only never pushes', remote['/notes/a.md'], 'a2 local');
    check('toolset: warnings', warnings, []);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
};

const only = process.argv.slice(2);
for (const [name, fn] of Object.entries(cases)) {
  if (only.length > 0 && !only.includes(name)) continue;
  try {
    await fn();
  } catch (err) {
    check(`${name}: threw`, `${err?.constructor?.name}: ${err?.message}`, null);
  }
}
process.stdout.write(JSON.stringify({ checks }) + '\n');
