// Browser launch, per-test isolation, console capture, screenshots and page helpers.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT } from './cli.mjs';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const ARTIFACTS = path.join(ROOT, 'target', 'e2e-artifacts');
export const READY_TIMEOUT = Number(process.env.E2E_READY_TIMEOUT_MS || 30000);
export const STEP_TIMEOUT = Number(process.env.E2E_STEP_TIMEOUT_MS || 15000);

/** Playwright creates a fresh temporary profile (user-data-dir) for a plain launch. */
export function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

export class AssertionError extends Error {}

export function assert(cond, message) {
  if (!cond) throw new AssertionError(message);
}

export function assertEqual(actual, expected, what) {
  if (actual !== expected) {
    throw new AssertionError(
      `${what}\n      expected: ${JSON.stringify(expected)}\n        actual: ${JSON.stringify(actual)}`,
    );
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` (async allowed) until it returns a truthy value; throws with `what` on timeout. */
export async function until(fn, what, timeout = STEP_TIMEOUT, interval = 50) {
  const deadline = Date.now() + timeout;
  let last;
  let lastErr;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > deadline) {
      const detail = lastErr ? ` (last error: ${lastErr.message})` : '';
      throw new AssertionError(`timed out after ${timeout} ms waiting for ${what}${detail}`);
    }
    await sleep(interval);
  }
}

/** Runs in the page: an element's text without its aria-hidden="true" parts. */
export function readerText(el) {
  const copy = el.cloneNode(true);
  for (const h of copy.querySelectorAll('[aria-hidden="true"]')) h.remove();
  return copy.textContent.replace(/\s+/g, ' ').trim();
}

function slug(name) {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 100);
}

/**
 * What a test gets: the page, the base URL and helpers. Console errors and page errors are
 * collected in `errors`; any of them fails the test.
 */
export class TestContext {
  constructor(name, context, page, baseURL) {
    this.name = name;
    this.context = context;
    this.page = page;
    this.baseURL = baseURL;
    this.errors = [];
    this.shots = [];
    this.notes = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') {
        const loc = msg.location();
        const where = loc && loc.url ? ` (${loc.url}:${loc.lineNumber})` : '';
        this.errors.push(`console.error: ${msg.text()}${where}`);
      }
    });
    page.on('pageerror', (err) => this.errors.push(`pageerror: ${err.stack || err.message}`));
    page.on('crash', () => this.errors.push('page crashed'));
  }

  note(text) {
    this.notes.push(text);
  }

  /** Navigates to the site (or a path below it) and waits for the app to be ready. */
  async open(pathAndQuery = '') {
    await this.page.goto(this.baseURL + pathAndQuery, { waitUntil: 'load' });
    await this.waitReady();
  }

  async reload() {
    await this.page.reload({ waitUntil: 'load' });
    await this.waitReady();
  }

  /** Waits for `data-ready="true"` on <html> and for two animation frames. */
  async waitReady() {
    try {
      await this.page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, {
        timeout: READY_TIMEOUT,
      });
    } catch (e) {
      throw new AssertionError(
        `the page never set document.documentElement.dataset.ready = "true" within ${READY_TIMEOUT} ms`,
      );
    }
    await this.frames(2);
  }

  /** Waits for `n` requestAnimationFrame callbacks. */
  async frames(n = 2) {
    await this.page.evaluate(
      (n) =>
        new Promise((resolve) => {
          let left = n;
          const tick = () => (--left <= 0 ? resolve() : requestAnimationFrame(tick));
          requestAnimationFrame(tick);
        }),
      n,
    );
  }

  async exists(selector) {
    return (await this.page.$(selector)) !== null;
  }

  /**
   * In a lesson step that asks a prediction, chooses "Just show me" and plays the run to its
   * end, as a learner who wants the run would: the verdict, the controls and the rest appear.
   * Anywhere else it does nothing.
   */
  async showRun() {
    if (!(await this.exists('#show-me'))) return;
    await this.page.click('#show-me');
    await this.page.waitForSelector('#to-end');
    await this.page.click('#to-end');
    await this.page.waitForSelector('#verdict-headline');
    await this.frames(2);
  }

  /**
   * Unfolds one of the sandbox's heavier panels (`#lab`, `#explore`, `#share`) by clicking its
   * heading, as a user would, and waits until `inside` shows: the first time, the sandbox's
   * bundle hands the page over to the studio's bundle, which draws the panel.
   */
  async unfold(id, inside) {
    if (!(await this.page.$eval(`#${id}`, (d) => d.open))) await this.page.click(`#${id} > summary`);
    await until(async () => (await this.exists(inside)) && (await this.page.$eval(`#${id}`, (d) => d.open)), `#${id} to unfold with ${inside}`, 30000);
  }

  async need(selector) {
    const el = await this.page.$(selector);
    assert(el !== null, `no element matches ${selector}`);
    return el;
  }

  /**
   * The text a reader gets from an element: its text without decoration marked
   * aria-hidden="true" (such as a ✓/✗ icon before a verdict), whitespace collapsed.
   */
  async text(selector) {
    await this.need(selector);
    return this.page.$eval(selector, readerText);
  }

  async value(selector) {
    await this.need(selector);
    return this.page.inputValue(selector);
  }

  async attr(selector, name) {
    await this.need(selector);
    return this.page.getAttribute(selector, name);
  }

  /** The number inside the `data-count` item of #verdict-counts. */
  async count(kind) {
    const sel = `#verdict-counts [data-count="${kind}"]`;
    const t = await this.text(sel);
    const m = t.match(/-?\d+(?:[.,]\d+)?/);
    assert(m, `${sel} has no number in its text ${JSON.stringify(t)}`);
    return Number(m[0].replace(',', '.'));
  }

  /** What the user sees of the result: headline, counts, editor and playhead. */
  async snapshot() {
    return this.page.evaluate(() => {
      const t = (s) => {
        const el = document.querySelector(s);
        if (!el) return null;
        const copy = el.cloneNode(true);
        for (const h of copy.querySelectorAll('[aria-hidden="true"]')) h.remove();
        return copy.textContent.replace(/\s+/g, ' ').trim();
      };
      const ed = document.querySelector('#editor');
      return {
        headline: t('#verdict-headline'),
        counts: t('#verdict-counts'),
        editor: ed ? ed.value : null,
        playhead: t('#playhead-verdict'),
        timeline: (() => {
          const svg = document.querySelector('#timeline');
          return svg ? svg.innerHTML.length + ':' + svg.querySelectorAll('*').length : null;
        })(),
      };
    });
  }

  /** Waits until the snapshot differs from `before` in one of `keys`, then until it is stable. */
  async waitChange(before, what, keys = ['headline', 'counts', 'editor']) {
    await until(async () => {
      const now = await this.snapshot();
      return keys.some((k) => now[k] !== before[k]);
    }, what);
    return this.settle();
  }

  /** Waits until ready and the snapshot stays the same over two polls 150 ms apart. */
  async settle() {
    let prev = null;
    return until(async () => {
      await this.page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, {
        timeout: READY_TIMEOUT,
      });
      await this.frames(2);
      const now = await this.snapshot();
      const same = prev && JSON.stringify(prev) === JSON.stringify(now);
      prev = now;
      if (same) return now;
      await sleep(150);
      return null;
    }, 'the page to settle');
  }

  /** Picks a built-in scenario in #scenario and waits for its run to show. */
  async pickScenario(file) {
    const opts = await this.page.$$eval('#scenario option', (os) => os.map((o) => o.value));
    assert(opts.includes(file), `#scenario has no option ${file}; options: ${opts.join(', ')}`);
    const before = await this.snapshot();
    const current = await this.value('#scenario');
    await this.page.selectOption('#scenario', file);
    // Two scenarios may share a headline and counts, but never their scenario text.
    if (current !== file) await this.waitChange(before, `the run of ${file} to show`);
    return this.settle();
  }

  /** Sets a range/number input's value and dispatches `input` (and `change` if asked). */
  async setInputValue(selector, value, { change = false } = {}) {
    await this.need(selector);
    await this.page.$eval(
      selector,
      (el, [v, change]) => {
        el.value = String(v);
        el.dispatchEvent(new Event('input', { bubbles: true }));
        if (change) el.dispatchEvent(new Event('change', { bubbles: true }));
      },
      [value, change],
    );
  }

  async blurToBody() {
    await this.page.evaluate(() => {
      if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    });
  }

  async screenshot(label, { fullPage = true } = {}) {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const file = path.join(ARTIFACTS, `${slug(this.name)}${label ? '--' + slug(label) : ''}.png`);
    await this.page.screenshot({ path: file, fullPage });
    this.shots.push(path.relative(ROOT, file));
    return file;
  }
}

/**
 * Runs the tests one by one, each in a fresh browser context, and prints cargo-style lines.
 * Returns { passed, failed }.
 */
export async function runTests(tests, { baseURL, filter } = {}) {
  const browser = await launchBrowser();
  // Screenshots of an earlier run would be mistaken for this run's.
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  for (const f of fs.readdirSync(ARTIFACTS)) if (f.endsWith('.png')) fs.rmSync(path.join(ARTIFACTS, f));
  const selected = tests.filter((t) => !filter || t.name.includes(filter));
  const filtered = tests.length - selected.length;
  console.log(`\nrunning ${selected.length} test${selected.length === 1 ? '' : 's'}`);
  const failures = [];
  let passed = 0;
  // One load first: a site that never becomes ready fails every test at once instead of
  // each of them waiting out the ready timeout.
  const pre = await browser.newContext();
  try {
    const page = await pre.newPage();
    await page.goto(baseURL, { waitUntil: 'load' });
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, {
      timeout: READY_TIMEOUT,
    });
  } catch (e) {
    console.log(`the site at ${baseURL} never set data-ready="true" on <html> within ${READY_TIMEOUT} ms: every test fails`);
    for (const t of selected) console.log(`test ${t.name} ... FAILED`);
    await pre.close().catch(() => {});
    await browser.close();
    return { passed: 0, failed: selected.length, filtered };
  }
  await pre.close();
  const perTestTimeout = Number(process.env.E2E_TEST_TIMEOUT_MS || 120000);
  const runOne = async (t) => {
    const started = Date.now();
    const context = await browser.newContext({
      viewport: t.viewport || { width: 1280, height: 900 },
      colorScheme: t.colorScheme || 'light',
      reducedMotion: 'reduce',
      // The site's offline copy (a service worker) is on, as in every browser; a test of what
      // happens when a file cannot load turns it off, or the copy would serve the file.
      serviceWorkers: t.serviceWorkers || 'allow',
    });
    const page = await context.newPage();
    const ctx = new TestContext(t.name, context, page, baseURL);
    let error = null;
    let timer;
    try {
      await Promise.race([
        t.run(ctx),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new AssertionError(`test timed out after ${perTestTimeout} ms`)),
            perTestTimeout,
          );
        }),
      ]);
    } catch (e) {
      error = e;
    } finally {
      clearTimeout(timer);
    }
    try {
      await ctx.screenshot('final');
    } catch (e) {
      ctx.note(`screenshot failed: ${e.message}`);
    }
    // Late console errors: whatever the page logged before a round trip through its next frame
    // and task has arrived by the trip's end, as the browser's events come in order. (A page
    // closed or gone answers at once; one that never draws again is given up after 2 s.)
    await Promise.race([
      ctx.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))).catch(() => {}),
      sleep(2000),
    ]);
    const problems = [];
    if (error) problems.push(error instanceof AssertionError ? error.message : error.stack || String(error));
    if (ctx.errors.length) problems.push(`console/page errors:\n      ${ctx.errors.join('\n      ')}`);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    if (problems.length === 0) {
      passed++;
      console.log(`test ${t.name} ... ok (${secs}s)`);
    } else {
      failures.push({ name: t.name, problems, ctx });
      console.log(`test ${t.name} ... FAILED (${secs}s)`);
    }
    for (const n of ctx.notes) console.log(`    note: ${n}`);
    await context.close().catch(() => {});
  };
  // Tests run two at a time by default (E2E_WORKERS): much of a test is the page and the
  // harness waiting on each other, and each test has a browser context of its own. Failures
  // are listed in the order the tests are written, whichever finished first.
  const workers = Math.max(1, Number(process.env.E2E_WORKERS || 2));
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(workers, selected.length) }, async () => {
      while (next < selected.length) await runOne(selected[next++]);
    }),
  );
  failures.sort((a, b) => selected.findIndex((t) => t.name === a.name) - selected.findIndex((t) => t.name === b.name));
  await browser.close();
  if (failures.length) {
    console.log('\nfailures:\n');
    for (const f of failures) {
      console.log(`---- ${f.name} ----`);
      for (const p of f.problems) console.log(`    ${p}`);
      if (f.ctx.shots.length) console.log(`    screenshots: ${f.ctx.shots.join(', ')}`);
      console.log('');
    }
    console.log('failures:');
    for (const f of failures) console.log(`    ${f.name}`);
  }
  return { passed, failed: failures.length, filtered };
}
