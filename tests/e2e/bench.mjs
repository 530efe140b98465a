#!/usr/bin/env node
// Browser figures for the Lockstep site (a benchmark, not a test: it always exits 0).
//
//   node tests/e2e/bench.mjs [--dist DIR]
//
// (a) navigation -> ready (data-ready="true" on <html>), median of 5 fresh page loads;
// (b) toggle -> new picture for benches/app-5000.toml (about 5,000 events), median of 10, at the
//     whole run and zoomed in until every message in view is drawn as an arrow;
// (c) scrubbing, one #scrub input event per animation frame: the work each step costs (input to
//     re-rendered, styled and laid out page), median and p95, against the 16 ms frame budget;
//     and the frame interval it leaves (16.7 ms at 60 Hz when no frame is dropped);
// (d) gzip -9 size of the first load (the sandbox's app.js + app_bg.wasm), and of the bundles
//     loaded on demand (the course's, the lesson checker's);
// (e) navigation to the embed view -> its headline and timeline painted, median of 5;
// (f) a sweep of 10,000 runs of a shipped scenario in the lab's worker;
// (h) a lesson step opened by its link: navigation to the step to read (its preview, drawn from
//     the course's files) and to the live step, on the local server and on a throttled line;
// (g) moving from one lesson step to the next through its link, for every step of every shipped
//     lesson: from the address changing to the new step painted (its title set, two frames).
//     The target (100 ms) is for the step with the largest scenario (the most events), moved to
//     from the step before it, median of 5; the slowest and the median of all moves are printed
//     beside it (the slowest is usually the first move after loading, while the browser is
//     still compiling the bundle's code).
// Targets (interactive < 1 s, toggle < 100 ms, scrub < 16 ms a frame, < 400 KB gzipped, embed
// < 500 ms, sweep < 3 s) can be changed with BENCH_READY_MS, BENCH_TOGGLE_MS,
// BENCH_FRAME_MEDIAN_MS, BENCH_FRAME_P95_MS, BENCH_GZIP_KB, BENCH_EMBED_MS, BENCH_SWEEP_MS and
// BENCH_STEP_MS.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { serveDir } from './lib/server.mjs';
import { launchBrowser, READY_TIMEOUT } from './lib/harness.mjs';
import { ROOT, LOCKSTEP, cliHeadline } from './lib/cli.mjs';

const TARGET = {
  readyMs: Number(process.env.BENCH_READY_MS || 1000),
  toggleMs: Number(process.env.BENCH_TOGGLE_MS || 100),
  frameMedianMs: Number(process.env.BENCH_FRAME_MEDIAN_MS || 16),
  frameP95Ms: Number(process.env.BENCH_FRAME_P95_MS || 16),
  gzipKB: Number(process.env.BENCH_GZIP_KB || 400),
  embedMs: Number(process.env.BENCH_EMBED_MS || 500),
  sweepMs: Number(process.env.BENCH_SWEEP_MS || 3000),
  stepMs: Number(process.env.BENCH_STEP_MS || 100),
};
const LOADS = 5;
const TOGGLES = 10;
const SCRUB_FRAMES = 120;
const BIG = path.join(ROOT, 'benches', 'app-5000.toml');

let dist = path.join(ROOT, 'dist');
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--dist') dist = path.resolve(process.argv[++i]);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const ms = (x) => (x === null || x === undefined || Number.isNaN(x) ? 'n/a' : `${x.toFixed(1)} ms`);
const verdict = (ok) => (ok ? 'PASS' : 'MISS');
const rows = [];
function report(label, value, target, ok, extra = '') {
  const line = `${label.padEnd(52)} ${value.padStart(12)}   target ${target.padEnd(12)} ${ok === null ? 'n/a ' : verdict(ok)}${extra ? '   ' + extra : ''}`;
  rows.push(line);
  console.log(line);
}

// Records performance.now() when <html data-ready="true"> first appears.
const READY_PROBE = () => {
  const mark = () => {
    if (document.documentElement && document.documentElement.dataset.ready === 'true' && !window.__readyAt) {
      window.__readyAt = performance.now();
    }
  };
  new MutationObserver(mark).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-ready'] });
  mark();
};

// Records performance.now() when the embed view says it is ready: its headline and timeline
// are painted (<html data-embed-ready="true">).
const EMBED_PROBE = () => {
  const mark = () => {
    if (document.documentElement && document.documentElement.dataset.embedReady === 'true' && !window.__embedAt) {
      window.__embedAt = performance.now();
    }
  };
  new MutationObserver(mark).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-embed-ready'] });
  mark();
};

/** Navigation to the embed view of a built-in scenario, until it is painted, LOADS times. */
async function embedToReady(browser, url) {
  const times = [];
  for (let i = 0; i < LOADS; i++) {
    const context = await browser.newContext();
    await context.addInitScript(EMBED_PROBE);
    const page = await context.newPage();
    await page.goto(`${url}#/embed?v=1&b=05-fencing.toml&controls=fencing%20accounts`, { waitUntil: 'commit' });
    await page.waitForFunction(() => window.__embedAt !== undefined, null, { timeout: READY_TIMEOUT });
    times.push(await page.evaluate(() => window.__embedAt));
    await context.close();
  }
  return times;
}

/**
 * Every step of every shipped lesson, in course order, entered through its link from the step
 * before it: the time until the new step is painted.
 */
async function stepTimes(browser, url) {
  const read = (f) => JSON.parse(fs.readFileSync(path.join(dist, 'course', f), 'utf8'));
  const lessons = read('index.json').lessons.map((id) => read(`${id}.json`).lesson);
  const places = lessons.flatMap((l) => l.steps.map((s) => ({ hash: `#/lessons/${l.id}/${s.id}`, title: `${s.title} · ${l.title} · Lockstep` })));
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  // Moves to a place and times it; the run's event count is read from the playhead's line
  // ("event 0 of N").
  const move = async (p) => {
    const t = await page.evaluate(async ({ hash, title }) => {
      const frame = () => new Promise((r) => requestAnimationFrame(r));
      const macrotask = () => new Promise((r) => { const c = new MessageChannel(); c.port1.onmessage = () => r(); c.port2.postMessage(0); });
      const t0 = performance.now();
      location.hash = hash;
      while (document.title !== title) {
        if (performance.now() > t0 + 30000) return null;
        await macrotask();
      }
      await frame();
      await frame();
      const events = /of (\d+)\)/.exec(document.querySelector('#playhead-verdict')?.textContent || '');
      return { ms: performance.now() - t0, events: events ? Number(events[1]) : 0 };
    }, p);
    if (t === null) throw new Error(`${p.hash} did not open within 30 s`);
    await page.waitForTimeout(50);
    return { hash: p.hash, ...t };
  };
  try {
    await page.goto(`${url}${places[0].hash}`);
    await waitReady(page);
    await page.waitForFunction((t) => document.title === t, places[0].title, { timeout: 30000 });
    const times = [];
    for (const p of places.slice(1)) times.push(await move(p));
    // The largest scenario's step, moved to from the step before it, five times.
    const largest = times.reduce((a, b) => (b.events > a.events ? b : a));
    const at = places.findIndex((p) => p.hash === largest.hash);
    const repeats = [];
    for (let i = 0; i < 5; i++) {
      await move(places[at - 1]);
      repeats.push((await move(places[at])).ms);
    }
    return { times, largest, repeats };
  } finally {
    await context.close();
  }
}

/**
 * A sweep of 10,000 runs of a shipped scenario in the lab's worker: 05-fencing, its pause's
 * length at five values, 2,000 seeds each. Time from the click to the worker's answer, and
 * the longest task the main thread ran meanwhile.
 */
async function sweepTime(browser, url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${url}#/sandbox`);
  await waitReady(page);
  await page.selectOption('#scenario', '05-fencing.toml');
  await page.waitForFunction(() => document.querySelector('#verdict-headline')?.textContent.includes('slow-1'));
  // The first unfolding hands the page over to the studio's bundle, which draws the panel.
  await page.click('#lab > summary');
  await page.waitForSelector('#sweep-param');
  await page.selectOption('#sweep-param', 'pause_ms');
  await page.fill('#sweep-values', '0,250,500,750,1000');
  await page.fill('#sweep-seeds', '2000');
  await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__long.push(e.duration))).observe({ type: 'longtask' });
  });
  const t0 = await page.evaluate(() => performance.now());
  await page.click('#sweep-run');
  await page.waitForFunction(() => document.documentElement.dataset.labAnswer !== undefined, null, { timeout: 120000 });
  const t1 = Number(await page.evaluate(() => document.documentElement.dataset.labAnswer));
  const longest = await page.evaluate(() => Math.max(0, ...window.__long));
  await context.close();
  return { ms: t1 - t0, longest };
}

/**
 * A lesson step opened by its link in a fresh browser: the time from navigation to its preview
 * (the step to read, with the picture of its run) and to the live step (its title drawn by the
 * course's bundle), each by performance.now() in the page, median of LOADS. With `line`, the
 * network is throttled to that many bits a second down and `rtt` ms of latency.
 */
async function lessonToRead(browser, url, line, rtt) {
  const rows = [];
  for (let i = 0; i < LOADS; i++) {
    const context = await browser.newContext({ serviceWorkers: 'block' });
    // When the preview first shows and when the live step's title first shows, however briefly
    // the preview stays.
    await context.addInitScript(() => {
      new MutationObserver(() => {
        if (window.__previewAt === undefined && document.getElementById('preview')) window.__previewAt = performance.now();
        if (window.__liveAt === undefined && document.querySelector('#view-title[data-place]')) window.__liveAt = performance.now();
      }).observe(document, { childList: true, subtree: true });
    });
    const page = await context.newPage();
    if (line) {
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: rtt, downloadThroughput: line / 8, uploadThroughput: line / 16 });
    }
    await page.goto(`${url}#/lessons/two-orders/two-services`, { waitUntil: 'commit' });
    await page.waitForFunction(() => window.__liveAt !== undefined, null, { timeout: 120000 });
    rows.push(await page.evaluate(() => [window.__previewAt, window.__liveAt]));
    await context.close();
  }
  return rows;
}

async function waitReady(page) {
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: READY_TIMEOUT });
}

async function navigationToReady(browser, url) {
  const times = [];
  for (let i = 0; i < LOADS; i++) {
    const context = await browser.newContext();
    await context.addInitScript(READY_PROBE);
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'commit' });
    await page.waitForFunction(() => window.__readyAt !== undefined, null, { timeout: READY_TIMEOUT });
    times.push(await page.evaluate(() => window.__readyAt));
    await context.close();
  }
  return times;
}

// One signature of the picture: headline, counts and the timeline's shape. Installed as an init
// script (the page's policy forbids eval, so a signature cannot be passed in as a string).
const SIGNATURE = () => {
  window.__signature = () => {
    const t = (s) => { const el = document.querySelector(s); return el ? el.textContent : ''; };
    const tl = document.querySelector('#timeline');
    const shape = tl ? tl.querySelectorAll('*').length + ':' + (tl.lastElementChild ? tl.lastElementChild.outerHTML.length : 0) : '';
    return t('#verdict-headline') + '|' + t('#verdict-counts') + '|' + shape;
  };
};

async function loadBigScenario(page) {
  const before = await page.evaluate(() => window.__signature());
  await page.fill('#editor', fs.readFileSync(BIG, 'utf8'));
  await page.waitForFunction((b) => window.__signature() !== b, before, { timeout: 30000 });
  await waitReady(page);
  await page.waitForTimeout(300);
  const errors = (await page.$('#editor-errors')) ? (await page.textContent('#editor-errors')).trim() : '';
  if (errors) throw new Error(`the app rejected benches/app-5000.toml: ${errors}`);
  if (fs.existsSync(LOCKSTEP)) {
    const expected = cliHeadline(BIG);
    const shown = await page.$eval('#verdict-headline', (el) => {
      const copy = el.cloneNode(true);
      for (const h of copy.querySelectorAll('[aria-hidden="true"]')) h.remove();
      return copy.textContent.replace(/\s+/g, ' ').trim();
    });
    if (shown !== expected) throw new Error(`the page does not show the run of benches/app-5000.toml: ${shown.slice(0, 100)}`);
  }
}

/** Times one toggle of `selector` until the picture changed and two frames passed. */
async function timeToggle(page, selector) {
  return page.evaluate(
    async ({ selector }) => {
      const el = document.querySelector(selector);
      const signature = () => window.__signature();
      const before = signature();
      const frame = () => new Promise((r) => requestAnimationFrame(r));
      const t0 = performance.now();
      if (el.type === 'checkbox') el.click();
      else {
        const opts = [...el.options].map((o) => o.value);
        el.value = opts[(opts.indexOf(el.value) + 1) % opts.length] === el.value ? opts[0] : opts[(opts.indexOf(el.value) + 1) % opts.length];
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
      }
      const deadline = t0 + 30000;
      while (signature() === before) {
        if (performance.now() > deadline) return null;
        await frame();
      }
      await frame();
      await frame();
      return performance.now() - t0;
    },
    { selector },
  );
}

/** Runs `measure` on a fresh page showing benches/app-5000.toml, then closes the page. */
async function withBigScenario(browser, url, measure) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(SIGNATURE);
  const page = await context.newPage();
  try {
    await page.goto(url);
    await waitReady(page);
    await loadBigScenario(page);
    return await measure(page);
  } finally {
    await context.close();
  }
}

/**
 * Zooms in until the canvas draws every message as an arrow (the page draws them all only when
 * they are few in view), so that a toggle is timed with arrows and notes on. Returns the zoom.
 */
async function zoomToArrows(page) {
  const zooms = await page.$$eval('#zoom option', (os) => os.map((o) => o.value));
  for (const z of zooms) {
    await page.selectOption('#zoom', z);
    await page.waitForTimeout(200);
    const arrows = Number(await page.getAttribute('#timeline', 'data-arrows'));
    if (arrows > 0) return { zoom: z, arrows };
  }
  throw new Error('no zoom level draws the arrows');
}

async function toggleTimes(browser, url, { arrows = false } = {}) {
  return withBigScenario(browser, url, async (page) => {
    const zoomed = arrows ? await zoomToArrows(page) : null;
    let selector = null;
    for (const s of ['#partition', '#fencing-orders']) if (await page.$(s)) { selector = s; break; }
    if (!selector) throw new Error('neither #partition nor #fencing-orders is on the page');
    const times = [];
    for (let i = 0; i < TOGGLES; i++) {
      const t = await timeToggle(page, selector);
      if (t === null) throw new Error(`toggling ${selector} did not change the picture within 30 s`);
      times.push(t);
      await waitReady(page);
      await page.waitForTimeout(100);
    }
    const notes = Number(await page.getAttribute('#timeline', 'data-notes'));
    return { selector, times, zoomed, notes };
  });
}

async function scrubFrames(browser, url) {
  return withBigScenario(browser, url, async (page) => {
    return await page.evaluate(async (frames) => {
      const el = document.querySelector('#scrub');
      if (!el) throw new Error('no #scrub');
      const min = Number(el.min || 0);
      const max = Number(el.max || 100);
      const stamps = [];
      const work = [];
      const before = document.querySelector('#playhead-verdict')?.textContent;
      // A macrotask boundary: the app renders in a microtask after the input event, so this
      // resolves once the new picture is in the DOM.
      const macrotask = () => new Promise((r) => { const c = new MessageChannel(); c.port1.onmessage = () => r(); c.port2.postMessage(0); });
      await new Promise((resolve) => {
        let i = 0;
        const tick = async (ts) => {
          stamps.push(ts);
          if (i >= frames) return resolve();
          el.value = String(min + ((max - min) * i) / (frames - 1));
          const t0 = performance.now();
          el.dispatchEvent(new Event('input', { bubbles: true }));
          await macrotask();
          void document.body.offsetHeight; // style and layout, as the frame would do them
          work.push(performance.now() - t0);
          i++;
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      });
      const intervals = stamps.slice(1).map((t, i) => t - stamps[i]);
      const after = document.querySelector('#playhead-verdict')?.textContent;
      return { intervals, work, moved: before !== after, range: [min, max] };
    }, SCRUB_FRAMES);
  });
}

/**
 * The gzip -9 size of one bundle's files: `app` is the sandbox's first load and `embed` the
 * embed view's; `course` is what a lesson link or the sandbox's heavier panels load (plus
 * the largest lesson's file); `checker`, `reader` and `lab` are workers started on demand.
 */
function gzipSizes(bundle, extra = []) {
  const files = fs
    .readdirSync(dist)
    .filter((f) => (f.startsWith(`${bundle}.`) || f.startsWith(`${bundle}_`)) && (f.endsWith('.wasm') || f.endsWith('.js')))
    .concat(extra.filter((f) => fs.existsSync(path.join(dist, f))));
  let raw = 0;
  let gz = 0;
  const parts = [];
  for (const f of files) {
    const data = fs.readFileSync(path.join(dist, f));
    const z = zlib.gzipSync(data, { level: 9 }).length;
    raw += data.length;
    gz += z;
    parts.push(`${f} ${(data.length / 1024).toFixed(1)} KB -> ${(z / 1024).toFixed(1)} KB`);
  }
  return { files, raw, gz, parts };
}

async function main() {
  console.log(`bench: ${path.relative(ROOT, dist) || '.'}/, headless Chromium, ${new Date().toISOString()}`);
  if (!fs.existsSync(path.join(dist, 'index.html'))) {
    console.log(`bench: ${dist}/index.html is missing; build the site first`);
    return;
  }
  const server = await serveDir(dist);
  const browser = await launchBrowser();
  try {
    try {
      const t = await navigationToReady(browser, server.url);
      const m = median(t);
      report(`(a) navigation -> ready, median of ${LOADS}`, ms(m), `<= ${TARGET.readyMs} ms`, m <= TARGET.readyMs, `[${t.map((x) => x.toFixed(0)).join(', ')}]`);
    } catch (e) {
      report('(a) navigation -> ready', 'error', `<= ${TARGET.readyMs} ms`, false, e.message.split('\n')[0]);
    }
    try {
      const t = await embedToReady(browser, server.url);
      const m = median(t);
      report(`(e) embed view: navigation -> headline and timeline painted, median of ${LOADS}`, ms(m), `<= ${TARGET.embedMs} ms`, m <= TARGET.embedMs, `[${t.map((x) => x.toFixed(0)).join(', ')}]`);
    } catch (e) {
      report('(e) embed view -> painted', 'error', `<= ${TARGET.embedMs} ms`, false, e.message.split('\n')[0]);
    }
    for (const [words, line, rtt] of [['local', 0, 0], ['1.5 Mbit/s, 150 ms', 1.5e6, 150]]) {
      try {
        const t = await lessonToRead(browser, server.url, line, rtt);
        const [preview, live] = [median(t.map((x) => x[0])), median(t.map((x) => x[1]))];
        report(`(h) a lesson step's link (${words}): the step to read, median of ${LOADS}`, ms(preview), 'n/a', null, `then live at ${ms(live)}`);
      } catch (e) {
        report(`(h) a lesson step's link (${words})`, 'error', 'n/a', null, e.message.split('\n')[0]);
      }
    }
    try {
      const { ms: t, longest } = await sweepTime(browser, server.url);
      report('(f) sweep of 10,000 runs (05-fencing) in the lab worker', ms(t), `<= ${TARGET.sweepMs} ms`, t <= TARGET.sweepMs, `longest main-thread task meanwhile ${ms(longest)}`);
    } catch (e) {
      report('(f) sweep of 10,000 runs', 'error', `<= ${TARGET.sweepMs} ms`, false, e.message.split('\n')[0]);
    }
    try {
      const { times, largest, repeats } = await stepTimes(browser, server.url);
      const slowest = times.reduce((a, b) => (b.ms > a.ms ? b : a));
      const m = median(repeats);
      report(`(g) next lesson step painted, largest scenario (${largest.events} events), median of 5`, ms(m), `<= ${TARGET.stepMs} ms`, m <= TARGET.stepMs, `${largest.hash}; [${repeats.map((r) => Math.round(r)).join(', ')}]`);
      report(`(g) every step move: slowest of ${times.length}, and the median`, ms(slowest.ms), 'n/a', null, `${slowest.hash}; median ${ms(median(times.map((t) => t.ms)))}`);
    } catch (e) {
      report('(g) next lesson step painted', 'error', `<= ${TARGET.stepMs} ms`, false, e.message.split('\n')[0]);
    }
    try {
      const { selector, times } = await toggleTimes(browser, server.url);
      const m = median(times);
      report(`(b) toggle ${selector} -> new picture, median of ${TOGGLES}`, ms(m), `<= ${TARGET.toggleMs} ms`, m <= TARGET.toggleMs, `[${times.map((x) => x.toFixed(0)).join(', ')}]`);
    } catch (e) {
      report('(b) toggle -> new picture (app-5000)', 'error', `<= ${TARGET.toggleMs} ms`, false, e.message.split('\n')[0]);
    }
    try {
      const { selector, times, zoomed, notes } = await toggleTimes(browser, server.url, { arrows: true });
      const m = median(times);
      report(
        `(b) same at zoom ${zoomed.zoom}x, ${zoomed.arrows} arrows and ${notes} notes on`,
        ms(m),
        `<= ${TARGET.toggleMs} ms`,
        m <= TARGET.toggleMs,
        `${selector} [${times.map((x) => x.toFixed(0)).join(', ')}]`,
      );
    } catch (e) {
      report('(b) toggle -> new picture with arrows on', 'error', `<= ${TARGET.toggleMs} ms`, false, e.message.split('\n')[0]);
    }
    try {
      const { intervals, work, moved } = await scrubFrames(browser, server.url);
      const wm = median(work);
      const w95 = percentile(work, 95);
      report(`(c) scrub work per frame, median of ${work.length}`, ms(wm), `<= ${TARGET.frameMedianMs} ms`, wm <= TARGET.frameMedianMs, moved ? '' : '(playhead text did not change!)');
      report(`(c) scrub work per frame, p95`, ms(w95), `<= ${TARGET.frameP95Ms} ms`, w95 <= TARGET.frameP95Ms, `max ${ms(Math.max(...work))}`);
      report(`(c) scrub frame interval, median`, ms(median(intervals)), '60 Hz = 16.7 ms', null, `p95 ${ms(percentile(intervals, 95))}`);
    } catch (e) {
      report('(c) scrub frame interval', 'error', `<= ${TARGET.frameMedianMs} ms`, false, e.message.split('\n')[0]);
    }
  } finally {
    await browser.close();
    await server.close();
  }
  // A first load is one bundle and the small loader that picks it: the sandbox's (also a
  // permalink's) or the embed view's.
  const loader = fs.readdirSync(dist).filter((f) => f.startsWith('loader-') && f.endsWith('.js'));
  for (const [label, bundle] of [
    ['(d) first load of the sandbox or a permalink: gzip -9 of app.js + app_bg.wasm + loader', 'app'],
    ['(d) first load of the embed view: gzip -9 of embed.js + embed_bg.wasm + loader', 'embed'],
  ]) {
    const g = gzipSizes(bundle, loader);
    const kb = g.gz / 1024;
    report(label, `${kb.toFixed(1)} KB`, `<= ${TARGET.gzipKB} KB`, g.files.length > 1 ? kb <= TARGET.gzipKB : null, `raw ${(g.raw / 1024).toFixed(1)} KB; ${g.parts.join('; ') || 'no .wasm/.js files'}`);
  }
  for (const [label, bundle, extra] of [
    ["(d) a lesson's place, live: the lesson bundle (both parts) + its lesson (course/two-orders.json, the largest)", 'course', ['course/two-orders.json']],
    ["(d) the sandbox's sweep, explorer or exports, or the facilitator's view: the studio bundle", 'studio', []],
    ['(d) opening a lesson file: the checker worker', 'checker', []],
    ["(d) the sandbox's first edit: the editor's reader worker", 'reader', []],
    ['(d) running a sweep or an exploration: the lab worker', 'lab', []],
  ]) {
    const b = gzipSizes(bundle, extra);
    if (b.files.length) report(label, `${(b.gz / 1024).toFixed(1)} KB`, 'loaded on demand', null, b.parts.join('; '));
  }
}

try {
  await main();
} catch (e) {
  console.log(`bench: ${e.stack || e.message}`);
}
process.exitCode = 0;
