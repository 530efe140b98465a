#!/usr/bin/env node
// End-to-end tests of the Lockstep site in headless Chromium (playwright-core).
//
//   node tests/e2e/run.mjs [FILTER] [--dist DIR] [--spec MODULE ...]
//
// Serves DIR (default dist/) on 127.0.0.1, runs every test whose name contains FILTER, saves a
// full-page screenshot per test in target/e2e-artifacts/ and ends with a cargo-style
// "test result:" line. Needs target/debug/lockstep (cargo build --bin lockstep) for the
// expected verdicts. Exits 1 when a test fails.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { serveDir } from './lib/server.mjs';
import { runTests, ARTIFACTS } from './lib/harness.mjs';
import { ROOT, checkCli, cleanupTemp } from './lib/cli.mjs';

const DEFAULT_SPECS = ['scenarios', 'toggles', 'playback', 'editor', 'views', 'a11y', 'picture', 'lessons', 'course_truth', 'share', 'embed_hosts', 'lab', 'bundles', 'workshop_room', 'workshop', 'room', 'recordings', 'preview'].map((s) =>
  path.join(ROOT, 'tests', 'e2e', 'specs', `${s}.mjs`),
);

function parseArgs(argv) {
  const out = { dist: process.env.E2E_DIST || path.join(ROOT, 'dist'), specs: [], filter: '' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--dist') out.dist = path.resolve(argv[++i]);
    else if (a === '--spec') out.specs.push(path.resolve(argv[++i]));
    else if (a === '--help' || a === '-h') {
      console.log('usage: node tests/e2e/run.mjs [FILTER] [--dist DIR] [--spec MODULE ...]');
      process.exit(0);
    } else if (a.startsWith('--')) {
      console.error(`unknown option ${a}`);
      process.exit(2);
    } else out.filter = a;
  }
  if (out.specs.length === 0) out.specs = DEFAULT_SPECS;
  return out;
}

function resultLine(passed, failed, filtered) {
  const status = failed === 0 ? 'ok' : 'FAILED';
  return `test result: ${status}. ${passed} passed; ${failed} failed; 0 ignored; 0 measured; ${filtered} filtered out`;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  let server;
  try {
    if (!fs.existsSync(path.join(args.dist, 'index.html'))) {
      throw new Error(`${args.dist}/index.html is missing: build the site first (trunk build --release)`);
    }
    checkCli();
    const tests = [];
    for (const spec of args.specs) {
      const mod = await import(pathToFileURL(spec).href);
      tests.push(...mod.tests);
    }
    server = await serveDir(args.dist);
    // The same shape as cargo's line, so scripts/test.sh labels the summary line with it.
    console.log('     Running tests/e2e/run.mjs (headless Chromium)');
    console.log(`serving ${path.relative(ROOT, args.dist) || '.'} at ${server.url}; screenshots in ${path.relative(ROOT, ARTIFACTS)}/`);
    const { passed, failed, filtered } = await runTests(tests, { baseURL: server.url, filter: args.filter });
    const secs = ((Date.now() - started) / 1000).toFixed(2);
    console.log(`\n${resultLine(passed, failed, filtered)}; finished in ${secs}s\n`);
    return failed === 0 ? 0 : 1;
  } catch (e) {
    console.error(`e2e: ${e.stack || e.message}`);
    console.log(`\n${resultLine(0, 1, 0)}\n`);
    return 1;
  } finally {
    if (server) await server.close();
    cleanupTemp();
  }
}

process.exitCode = await main();
