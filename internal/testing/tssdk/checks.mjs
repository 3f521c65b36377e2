// checks.mjs is what the TypeScript SDK's conformance scripts share. SDK.Run
// names this file in TEAMMEM_TS_CHECKS; a script imports it from there,
// records observations with check, and ends with report(run), which prints
// {"checks":[{name, got, want}]} on stdout for the Go test to assert.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Anthropic is the SDK's client class, from the package in TEAMMEM_TS_SDK.
export const Anthropic = (await import(pathToFileURL(path.join(process.env.TEAMMEM_TS_SDK, 'index.mjs')).href)).default;

const checks = [];

// check records one observation and what the script wants.
export function check(name, got, want) {
  checks.push({ name, got: got === undefined ? null : got, want });
}

// client is an SDK client on url with key that never retries, so that a
// retryable answer shows as the error it is.
export function client(url, key) {
  return new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 });
}

// caught runs fn and returns the error it throws, or null.
export async function caught(fn) {
  try {
    await fn();
    return null;
  } catch (err) {
    return err;
  }
}

// refusal is what the SDK made of an error: its class, status and envelope type.
export function refusal(err) {
  if (!err) return null;
  return { class: err.constructor.name, status: err.status ?? null, type: err.error?.error?.type ?? null };
}

// report runs run, recording a thrown error as a failed check, and prints
// the checks.
export async function report(run) {
  try {
    await run();
  } catch (err) {
    check('threw', String(err?.stack ?? err), null);
  }
  process.stdout.write(JSON.stringify({ checks }));
}
