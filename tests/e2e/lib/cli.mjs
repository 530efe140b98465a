// Runs the native CLI (target/debug/lockstep) to get the expected verdicts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
export const SCENARIO_DIR = path.join(ROOT, 'lessons', 'scenarios');
export const LOCKSTEP = process.env.LOCKSTEP_BIN || path.join(ROOT, 'target', 'debug', 'lockstep');

/** The built-in scenario file names, sorted. */
export function builtinScenarios() {
  return fs
    .readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.toml'))
    .sort();
}

export function checkCli() {
  if (!fs.existsSync(LOCKSTEP)) {
    throw new Error(`${LOCKSTEP} is missing: run \`cargo build --bin lockstep\` first`);
  }
}

function runCli(args) {
  const r = spawnSync(LOCKSTEP, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    throw new Error(`lockstep ${args.join(' ')} exited ${r.status}: ${r.stderr.trim()}`);
  }
  return r.stdout;
}

/** The line starting with "Exclusion " of `lockstep run FILE --no-trace [--seed N]`. */
export function cliHeadline(file, seed) {
  const args = ['run', file, '--no-trace'];
  if (seed !== undefined && seed !== null && seed !== '') args.push('--seed', String(seed));
  const out = runCli(args);
  const line = out.split('\n').find((l) => l.startsWith('Exclusion '));
  if (!line) throw new Error(`no "Exclusion " line in the CLI output for ${file}:\n${out}`);
  return line;
}

/** `lockstep run FILE --json [--seed N]`, parsed. */
export function cliJson(file, seed) {
  const args = ['run', file, '--json'];
  if (seed !== undefined && seed !== null && seed !== '') args.push('--seed', String(seed));
  return JSON.parse(runCli(args));
}

let tmpDir;
let tmpCount = 0;
/** Writes scenario text (TOML) to a temp file and returns its path. */
export function tempScenario(text) {
  if (!tmpDir) tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-e2e-'));
  const file = path.join(tmpDir, `scenario-${++tmpCount}.toml`);
  fs.writeFileSync(file, text);
  return file;
}

const textCache = new Map();
/** The CLI headline for scenario TOML text (e.g. the app's #editor) and a seed. */
export function cliHeadlineForText(text, seed) {
  const key = `${seed}\u0000${text}`;
  if (!textCache.has(key)) textCache.set(key, cliHeadline(tempScenario(text), seed));
  return textCache.get(key);
}

export function cleanupTemp() {
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}

