// A lesson's step or exercise is first shown as the course's files drew it (course/LESSON.PLACE.html,
// written natively; static/lesson-preview.js only decides whether to show it): its title,
// narration and a picture of its run, before the course's bundle is even asked for.
// The live view then takes its place with the same words and the same run. Where the live place
// would show another run (the learner's own, a lesson that replaces a shipped one) or no place
// at all, there is no picture.
import fs from 'node:fs';
import path from 'node:path';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { ROOT } from '../lib/cli.mjs';
import { axe } from './a11y.mjs';

/** A shipped lesson's compact form, as the page fetches it. */
function lessonFile(id) {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'static', 'course', `${id}.json`), 'utf8')).lesson;
}

/**
 * Holds the course's bundle back until `release()`; `asked` resolves, when the page asks for
 * it, to whether the step's picture was on the page at that moment.
 */
async function holdBundle(page) {
  let release;
  const gate = new Promise((r) => (release = r));
  let asked;
  const seen = new Promise((r) => (asked = r));
  await page.route('**/course.js', async (route) => {
    asked(await page.evaluate(() => Boolean(document.getElementById('preview'))).catch((e) => `unknown: ${e.message}`));
    await gate;
    await route.continue();
  });
  return { release, seen };
}

/** The live step's view, once it has taken over. */
async function liveStep(ctx, place) {
  await ctx.waitReady();
  await ctx.page.waitForSelector(`#view-title[data-place="${place}"]`, { timeout: 20000 });
  await ctx.frames(2);
}

/** Marks, from a page's first script on, whether a preview was ever put on it, however briefly. */
function watchPreview(target) {
  return target.addInitScript(() => {
    new MutationObserver(() => {
      if (document.getElementById('preview')) document.documentElement.dataset.sawPreview = 'true';
    }).observe(document, { childList: true, subtree: true });
  });
}

/** 'true' if a page watched by watchPreview ever had a preview, else null. */
function sawPreview(page) {
  return page.evaluate(() => document.documentElement.dataset.sawPreview ?? null);
}

export const tests = [
  {
    // A step, the lesson's address alone (its first step, with the lesson's introduction) and
    // an exercise.
    name: 'preview::a_place_is_read_from_the_courses_files_before_its_simulator_arrives',
    serviceWorkers: 'block',
    async run(ctx) {
      const places = [
        { address: '#/lessons/two-orders/two-services', lesson: 'two-orders', place: 'two-services', words: 'Now the scenario as it ships.' },
        { address: '#/lessons/lock-in-both', lesson: 'lock-in-both', place: 'both-at-once' },
        { address: '#/lessons/fencing/two-sources-one-table', lesson: 'fencing', place: 'two-sources-one-table', exercise: true },
      ];
      for (const p of places) {
        const lesson = lessonFile(p.lesson);
        const it = [...lesson.steps, ...lesson.exercises].find((x) => x.id === p.place);
        const page = await ctx.context.newPage();
        const fetched = [];
        page.on('request', (r) => fetched.push(new URL(r.url()).pathname.split('/').pop()));
        const held = await holdBundle(page);
        await page.goto(`${ctx.baseURL}${p.address}`, { waitUntil: 'domcontentloaded' });
        assertEqual(await held.seen, true, `${p.address}: the place was on the page before the bundle was asked for`);
        const before = [...fetched];
        assert(!before.some((f) => f.endsWith('.wasm')), `${p.address}: no bundle before the place shows: ${before.join(' ')}`);
        // A step that asks a prediction has no picture: its run is the answer.
        const asks = !p.exercise && Boolean(it.prediction);
        // The place as the course's files drew it, natively: one file with its words and its
        // picture (none where a prediction is open); no lesson file is read to draw it.
        assert(before.includes('previews.json') && before.includes(`${p.lesson}.${p.place}.html`), `${p.address}: the index of previews and the place's preview in ${before.join(' ')}`);
        assert(!before.some((f) => f.endsWith('.svg')), `${p.address}: no picture apart from the preview's: ${before.join(' ')}`);
        // The live place's own lesson file is asked for beside the preview (the script preloads
        // it, never reads it) and fetched once.
        const words = (root) => {
          const t = (s) => root.querySelector(s)?.textContent.replace(/\s+/g, ' ').trim() ?? null;
          return {
            title: t('h2'), where: t('.where'), crumbs: t('.crumbs'), intro: t('.intro'), assumptions: t('.assumptions'),
            narration: t('.narration'), prediction: t('.predict > p'), goal: t('.goal'),
          };
        };
        // Read from each view by the same function (Playwright sends it to the page).
        const shownWords = await page.$eval('#preview main', words);
        const shown = await page.evaluate(() => {
          const p = document.getElementById('preview');
          const box = p.getBoundingClientRect();
          return {
            picture: p.querySelector('svg desc')?.textContent ?? null,
            tab: document.title,
            top: p.querySelector('h2').getBoundingClientRect().top,
            header: [...p.querySelectorAll('header h1, header .tagline, header nav a')].map((e) => `${e.textContent}${e.getAttribute('href') ?? ''}${e.getAttribute('aria-current') ?? ''}`),
            visible: getComputedStyle(p).display !== 'none' && box.height > 300,
            controls: [...p.querySelectorAll('button, input, select, textarea')].filter((e) => getComputedStyle(e).visibility !== 'hidden' && !e.closest('[inert]')).length,
          };
        });
        shown.words = shownWords;
        assertEqual(shown.words.title, it.title, `${p.address}: the place's title`);
        if (p.words) assert(shown.words.narration.includes(p.words), `${p.address}: the narration: ${shown.words.narration}`);
        assert(shown.visible, `${p.address}: the preview is on screen`);
        assertEqual(shown.controls, 0, `${p.address}: no control before the simulator can answer`);
        await axe({ page, note: (t) => ctx.note(t) }, `the preview of ${p.address}`);

        held.release();
        await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
        await page.waitForSelector(`#view-title[data-place="${p.place}"]`, { timeout: 20000 });
        assert(before.includes(`${p.lesson}.json`), `${p.address}: the lesson's file asked for beside the preview: ${before.join(' ')}`);
        assertEqual(fetched.filter((f) => f === `${p.lesson}.json`).length, 1, `${p.address}: the lesson's file fetched once: ${fetched.join(' ')}`);
        const liveWords = await page.$eval('#course-app main', words);
        const live = await page.evaluate(() => ({
          preview: Boolean(document.getElementById('preview')),
          attr: document.documentElement.dataset.preview ?? null,
          headline: document.getElementById('verdict-headline')?.textContent ?? null,
          pending: Boolean(document.getElementById('verdict-pending')),
          tab: document.title,
          top: document.getElementById('view-title').getBoundingClientRect().top,
          header: [...document.querySelectorAll('#course-app header h1, #course-app header .tagline, #course-app header nav a')].map((e) => `${e.textContent}${e.getAttribute('href') ?? ''}${e.getAttribute('aria-current') ?? ''}`),
          width: document.querySelector('canvas')?.getAttribute('width'),
        }));
        live.words = liveWords;
        assert(!live.preview && live.attr === null, `${p.address}: the live view took the preview's place`);
        // The same words as the live place: title, where it is, the way back, the
        // introduction, the narration and the goal.
        assertEqual(JSON.stringify(shown.words), JSON.stringify(live.words), `${p.address}: the preview's words are the live place's`);
        assertEqual(shown.tab, live.tab, `${p.address}: the tab's title`);
        assertEqual(JSON.stringify(shown.header), JSON.stringify(live.header), `${p.address}: the page's header`);
        // What the reader is reading does not move when the live view takes over.
        assertEqual(Math.round(shown.top), Math.round(live.top), `${p.address}: the title's place on the screen`);
        if (asks) {
          // Neither view answers the question before the learner commits.
          assertEqual(shown.picture, null, `${p.address}: no picture of the run before the prediction`);
          assert(live.headline === null && live.pending, `${p.address}: no verdict before the prediction`);
        } else {
          assert(shown.picture.startsWith(`${live.headline} Seed `), `${p.address}: the picture's run is the live run: "${shown.picture}" against "${live.headline}"`);
        }

        // Laid out while hidden, the live view measured its timeline as it is shown: the same
        // width as on a page that had no preview.
        const plain = await ctx.context.newPage();
        await plain.route('**/lesson-preview.js', (route) => route.abort());
        await plain.goto(`${ctx.baseURL}${p.address}`);
        await plain.waitForSelector(`#view-title[data-place="${p.place}"]`, { timeout: 20000 });
        const width = await plain.evaluate(() => document.querySelector('canvas')?.getAttribute('width'));
        await plain.close();
        await page.close();
        assert(width, 'the timeline has a width');
        assertEqual(live.width, width, `${p.address}: the timeline's width with and without the preview`);
      }
    },
  },
  {
    // Each case: no picture is ever put on the page, and the live view draws the place. The
    // first case, with nothing stored, is the control: the same address has its picture.
    name: 'preview::no_picture_where_the_live_step_would_show_another_run_or_no_step',
    serviceWorkers: 'block',
    async run(ctx) {
      const progress = JSON.stringify({ lessons: { regions: { seen: ['partition'], gates: ['partition'], gate_edits: { partition: [] }, solved: {} } } });
      const changed = JSON.stringify({ lessons: { fencing: { seen: ['two-sources-one-table'], gates: [], solved: {}, exercise_edits: { 'two-sources-one-table': ['fencing inventory any_source writes'] } } } });
      // The learner's own copy of a shipped lesson, with a step of another title.
      const copy = lessonFile('regions');
      copy.steps[0].title = 'Cut apart, as opened';
      const opened = JSON.stringify({ files: [{ id: 'regions', text: 'the lesson file as opened', lesson: copy }] });
      const cases = [
        { why: 'nothing stored (the control)', address: '#/lessons/regions/partition', place: 'partition', shown: true },
        { why: 'an exercise the learner changed (their own run)', address: '#/lessons/fencing/two-sources-one-table', place: 'two-sources-one-table', store: ['lockstep.progress.v1', changed] },
        { why: 'a step whose goal the learner met (their own run)', address: '#/lessons/regions/partition', place: 'partition', store: ['lockstep.progress.v1', progress] },
        { why: 'a place the lesson does not have', address: '#/lessons/regions/nowhere', selector: '#main' },
        { why: 'a lesson the learner opened, which replaces the shipped one', address: '#/lessons/regions/partition', place: 'partition', store: ['lockstep.lessons.v1', opened], title: 'Cut apart, as opened' },
        { why: 'a folder of lessons beside the site', address: '#/lessons/regions/partition', place: 'partition', folder: true },
      ];
      for (const c of cases) {
        const context = await ctx.context.browser().newContext({ serviceWorkers: 'block' });
        await watchPreview(context);
        const page = await context.newPage();
        const errors = [];
        page.on('pageerror', (e) => errors.push(e.message));
        // What an earlier visit left in this browser, there before the page's own scripts run.
        if (c.store) await context.addInitScript(([k, v]) => localStorage.setItem(k, v), c.store);
        if (c.folder) {
          // A folder that lists a lesson file the test does not serve: the page says so, and
          // the shipped step is still shown.
          await page.route('**/lessons/index.json', (route) => route.fulfill({ contentType: 'application/json', body: '{"lessons":["missing.md"]}' }));
        }
        const held = await holdBundle(page);
        await page.goto(`${ctx.baseURL}${c.address}`, { waitUntil: 'domcontentloaded' });
        assertEqual(await held.seen, Boolean(c.shown), `${c.why}: ${c.shown ? 'the picture' : 'no picture'} when the bundle is asked for`);
        held.release();
        await page.waitForSelector(c.selector ?? `#view-title[data-place="${c.place}"]`, { timeout: 20000 });
        await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
        assertEqual(await sawPreview(page), c.shown ? 'true' : null, `${c.why}: ${c.shown ? 'a preview' : 'never a preview'}`);
        assertEqual(await page.evaluate(() => document.documentElement.dataset.preview ?? null), null, `${c.why}: nothing left of a preview`);
        if (c.title) assertEqual(await page.textContent('#view-title'), c.title, `${c.why}: the live place is the learner's copy`);
        assertEqual(errors.join('; '), '', `${c.why}: no page error`);
        await context.close();
      }
    },
  },
  {
    // The reader moves to another place while the preview's script is still coming: no
    // preview of the place they left, and the live view draws the one they went to.
    name: 'preview::an_address_changed_while_the_preview_loads_shows_no_stale_place',
    serviceWorkers: 'block',
    async run(ctx) {
      await watchPreview(ctx.page);
      let release;
      const gate = new Promise((r) => (release = r));
      let asked;
      const requested = new Promise((r) => (asked = r));
      await ctx.page.route('**/lesson-preview.js', async (route) => {
        asked();
        await gate;
        await route.continue();
      });
      await ctx.page.goto(`${ctx.baseURL}#/lessons/fencing/stale-write`, { waitUntil: 'domcontentloaded' });
      await requested;
      await ctx.page.evaluate(() => { location.hash = '#/lessons/fencing/every-access'; });
      release();
      await ctx.page.waitForSelector('#view-title[data-place="every-access"]', { timeout: 20000 });
      await ctx.waitReady();
      assertEqual(await sawPreview(ctx.page), null, 'no preview of the place left behind');
    },
  },
  {
    // A page drawn from the offline copy has the simulator at hand: the copy keeps no picture,
    // and a step opens live at once, with the network on or off.
    name: 'preview::a_page_from_the_offline_copy_opens_a_step_live_at_once',
    async run(ctx) {
      await ctx.open('#/lessons/regions/partition');
      await ctx.page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
      await until(
        () => ctx.page.evaluate(async () => (await caches.keys()).some((k) => k.startsWith('lockstep-'))),
        'the offline copy to be cached',
        30000,
      );
      const kept = await ctx.page.evaluate(async () => {
        const names = [];
        for (const key of await caches.keys()) for (const r of await (await caches.open(key)).keys()) names.push(new URL(r.url).pathname);
        return names;
      });
      assert(kept.some((n) => n.endsWith('/course/regions.json')), 'the lessons are kept');
      assert(!kept.some((n) => n.endsWith('.run.svg') || /\/course\/[^/]+\.[^/]+\.html$/.test(n) || n.endsWith('/previews.json')), 'no picture or preview is kept');
      await watchPreview(ctx.page);
      for (const offline of [false, true]) {
        await ctx.context.setOffline(offline);
        try {
          await ctx.page.goto(`${ctx.baseURL}#/lessons/two-orders/two-services`);
          await ctx.reload();
          await liveStep(ctx, 'two-services');
          assert(await ctx.page.evaluate(() => Boolean(navigator.serviceWorker.controller)), 'the page is drawn from the offline copy');
          assertEqual(await sawPreview(ctx.page), null, `no preview (${offline ? 'offline' : 'online'})`);
        } finally {
          await ctx.context.setOffline(false);
        }
      }
    },
  },
];
