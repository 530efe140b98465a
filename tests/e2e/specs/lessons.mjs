// The course in the browser: the course view, a lesson followed with the keyboard (cues that
// follow the playhead, a gate passed by the learner's own run), an exercise solved through the
// controls with its completion code verified in the facilitator view, deep links, the back
// button, the first screen at 1280×800 and at 360 px, and axe on the new views.
import fs from 'node:fs';
import path from 'node:path';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { LOCKSTEP, ROOT } from '../lib/cli.mjs';
import { spawnSync } from 'node:child_process';
import { checkVerdictRegion } from '../lib/checks.mjs';
import { axe } from './a11y.mjs';

/** Opens a route and waits until its view has drawn (and, in a lesson, the place is shown). */
async function openRoute(ctx, hash, place) {
  await ctx.open(hash);
  if (place) await waitPlace(ctx, place);
  else await ctx.page.waitForSelector('#view-title');
}

/** Waits for a place; a step's prediction is skipped ("Just show me") unless `ask` keeps it open. */
async function waitPlace(ctx, place, { ask = false } = {}) {
  await ctx.page.waitForSelector(`#view-title[data-place="${place}"]`, { timeout: 20000 });
  await ctx.frames(2);
  if (!ask) await ctx.showRun();
}

const cueCount = (ctx) => ctx.page.$$eval('#cues li', (ls) => ls.length);

/** Where an element is, relative to the viewport. */
function box(ctx, selector) {
  return ctx.page.$eval(selector, (el) => {
    const r = el.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height };
  });
}

/** Solves lesson 1's exercise through its menu: the batch job moves to the service that stays. */
async function solveExercise(ctx) {
  await openRoute(ctx, '#/lessons/two-orders/retire-old', 'retire-old');
  await ctx.page.click('#protocol-batch');
  await ctx.page.selectOption('#protocol-batch', 'single:new');
  await until(async () => (await ctx.text('#verdict-headline')).startsWith('Exclusion holds'), 'the run to hold');
  await ctx.page.click('#check');
  await ctx.page.waitForSelector('#success', { timeout: 20000 });
  return ctx.value('#completion-code');
}

export const tests = [
  {
    name: 'lessons::sandbox_first_load_leaves_the_course_for_later',
    async run(ctx) {
      const fetched = [];
      ctx.page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
      await ctx.open();
      await ctx.page.waitForSelector('#timeline');
      const early = fetched.filter((p) => /course|lessons\.json/.test(p));
      assertEqual(JSON.stringify(early), '[]', 'the sandbox alone fetches nothing of the course');
      // The navigation hands the page over to the lesson view's bundle.
      await ctx.page.click('#nav-lessons');
      await ctx.page.waitForSelector('#course li', { timeout: 20000 });
      assert(fetched.some((p) => p.endsWith('/course_bg.wasm')), 'the course bundle is loaded on demand');
      assert(fetched.some((p) => p.endsWith('/course/index.json')), 'the lessons are fetched on demand');
      assertEqual(await ctx.page.$$eval('header.top', (h) => h.length), 1, 'one page header after the hand-over');
      // And back to the sandbox, in the sandbox's bundle again.
      await ctx.page.click('#nav-sandbox');
      await ctx.page.waitForSelector('#timeline');
      await checkVerdictRegion(ctx);
    },
  },
  {
    name: 'lessons::course_lists_every_lesson_with_its_progress',
    async run(ctx) {
      await openRoute(ctx, '#/lessons');
      await ctx.page.waitForSelector('#course li');
      const cards = await ctx.page.$$eval('#course li.lesson-card', (ls) => ls.map((l) => l.dataset.lesson));
      assert(cards.length >= 6, `the course lists ${cards.length} lessons`);
      assertEqual(cards[0], 'two-orders', 'the first lesson');
      const progress = await ctx.text('#lesson-two-orders-progress');
      assert(/^0 of \d+ steps seen/.test(progress), `progress before any step: ${progress}`);
      // Seeing a step is remembered, in local storage, across a reload.
      await openRoute(ctx, '#/lessons/two-orders', 'one-service');
      await openRoute(ctx, '#/lessons');
      await ctx.page.waitForSelector('#course li');
      const after = await ctx.text('#lesson-two-orders-progress');
      assert(after.startsWith('1 of'), `progress after the first step: ${after}`);
      const current = await ctx.attr('#nav-lessons', 'aria-current');
      assertEqual(current, 'page', 'the navigation marks the lessons as the current view');
    },
  },
  {
    name: 'lessons::first_lesson_with_the_keyboard_cues_and_a_gate',
    async run(ctx) {
      await openRoute(ctx, '#/lessons/two-orders', 'one-service');
      await checkVerdictRegion(ctx);
      // The first step is only watched: no controls are offered.
      assert(!(await ctx.exists('#protocol-online')), 'a watched step offers no protocol control');
      // Step through the run with the arrow key until the first cue appears at its event. The
      // step asked a prediction, skipped by playing the run to its end: back to its start.
      await ctx.page.click('#to-start');
      await ctx.page.focus('#timeline canvas').catch(() => ctx.blurToBody());
      assertEqual(await cueCount(ctx), 0, 'cues shown at the start');
      let steps = 0;
      while ((await cueCount(ctx)) === 0 && steps < 400) {
        await ctx.page.keyboard.press('ArrowRight');
        steps += 1;
      }
      assert((await cueCount(ctx)) >= 1, `no cue appeared after ${steps} steps`);
      ctx.note(`first cue after ${steps} event(s)`);
      // Scrubbing back before its event takes it away again.
      await ctx.page.click('#to-start');
      await until(async () => (await cueCount(ctx)) === 0, 'the cue to go when the playhead goes back');
      // And forward again brings it back.
      await ctx.page.click('#to-end');
      await until(async () => (await cueCount(ctx)) >= 1, 'the cues to come back at the end');

      // n goes to the next step; its gate holds the lesson until the run meets it.
      await ctx.blurToBody();
      await ctx.page.keyboard.press('n');
      await waitPlace(ctx, 'two-services');
      assert(ctx.page.url().endsWith('#/lessons/two-orders/two-services'), `the address follows: ${ctx.page.url()}`);
      // On to the step with a gate.
      await openRoute(ctx, '#/lessons/two-orders/two-orders', 'two-orders');
      assertEqual(await ctx.attr('#next-step', 'aria-disabled'), 'true', 'Next waits for the gate');
      assert((await ctx.text('#gate-status')).startsWith('Not yet'), 'the gate is not met at the start');
      await ctx.blurToBody();
      await ctx.page.keyboard.press('n');
      await ctx.frames(3);
      assert(ctx.page.url().endsWith('/two-orders/two-orders'), 'n does not pass an unmet gate');
      // Only the step's control is offered; changing it so that exclusion holds meets the gate.
      assert(await ctx.exists('#protocol-online'), 'the step offers the online class protocol');
      assert(!(await ctx.exists('#partition')), 'the step offers nothing else');
      await ctx.page.selectOption('#protocol-online', 'single:old');
      await until(async () => (await ctx.text('#gate-status')).startsWith('Done'), 'the gate to be met');
      assert((await ctx.text('#verdict-headline')).startsWith('Exclusion holds'), 'the run holds');
      await ctx.blurToBody();
      await ctx.page.keyboard.press('n');
      await waitPlace(ctx, 'incomparable');
      // p goes back one step.
      await ctx.blurToBody();
      await ctx.page.keyboard.press('p');
      await waitPlace(ctx, 'two-orders');
    },
  },
  {
    // Lessons 1 and 5 end their steps with a run recorded on real etcd: the page shows the
    // shipped recording judged afresh (the same headline `lockstep judge` prints), labelled with
    // what it was recorded on, with its cues, no controls, and no request beyond the site.
    name: 'lessons::the_same_on_real_etcd_shows_the_shipped_recording',
    async run(ctx) {
      const origin = new URL(ctx.baseURL).origin;
      const elsewhere = [];
      ctx.page.on('request', (r) => {
        if (new URL(r.url()).origin !== origin && !r.url().startsWith('data:')) elsewhere.push(r.url());
      });
      for (const [lesson, file] of [
        ['two-orders', '01-two-services.json'],
        ['fencing', '05-fencing-every-access.json'],
      ]) {
        await openRoute(ctx, `#/lessons/${lesson}/real-etcd`, 'real-etcd');
        const judged = spawnSync(LOCKSTEP, ['judge', path.join(ROOT, 'lessons', 'recordings', file), '--no-trace'], { encoding: 'utf8' });
        assertEqual(judged.status, 0, `lockstep judge ${file}: ${judged.stderr}`);
        const lines = judged.stdout.split('\n');
        assertEqual(await ctx.text('#verdict-headline'), lines[2], `${lesson}: the headline is the recording's verdict`);
        const label = await ctx.text('#recorded-label');
        assert(label.startsWith(lines[0]), `${lesson}: the label is the recording's: ${label}`);
        assert(/etcd 3\.\d+\.\d+/.test(label), `${lesson}: the label names etcd's version: ${label}`);
        assert((await ctx.text('p.hint.watched')).startsWith('This run was recorded on real services'), `${lesson}: a recorded step offers no control, and says why`);
        await ctx.page.click('#to-end');
        await until(async () => (await cueCount(ctx)) >= 3, `${lesson}: the cues to show on the recorded events`);
      }
      // A simulated step carries no such label.
      await openRoute(ctx, '#/lessons/fencing/every-access', 'every-access');
      assert(!(await ctx.exists('#recorded-label')), 'a simulated step is not labelled as recorded');
      assertEqual(JSON.stringify(elsewhere), '[]', 'the page asked nothing of any other origin');
    },
  },
  {
    name: 'lessons::back_button_walks_back_through_the_steps',
    async run(ctx) {
      await openRoute(ctx, '#/lessons/fencing', 'stale-write');
      await ctx.page.click('#next-step');
      await waitPlace(ctx, 'writes-only');
      await ctx.page.click('#prev-step');
      await waitPlace(ctx, 'stale-write');
      await ctx.page.click('#next-step');
      await waitPlace(ctx, 'writes-only');
      await ctx.page.goBack();
      await waitPlace(ctx, 'stale-write');
      await ctx.page.goBack();
      await waitPlace(ctx, 'writes-only');
      await ctx.page.goBack();
      await waitPlace(ctx, 'stale-write');
      await ctx.page.goForward();
      await waitPlace(ctx, 'writes-only');
    },
  },
  {
    name: 'lessons::a_step_fetches_its_own_lesson_first_and_the_others_after',
    async run(ctx) {
      const fetched = [];
      ctx.page.on('request', (r) => fetched.push(new URL(r.url()).pathname.replace(/^.*\/course\//, 'course/')));
      await openRoute(ctx, '#/lessons/fencing/every-access', 'every-access');
      // The lessons' files (the step's preview and the index of previews are other files of
      // the course).
      const lessons = () => fetched.filter((p) => p.startsWith('course/') && p.endsWith('.json') && p !== 'course/previews.json');
      assertEqual(JSON.stringify(lessons().slice(0, 2)), '["course/index.json","course/fencing.json"]', 'the index, then the step\'s own lesson');
      // The index is asked for beside the bundle, before its script (index.html preloads it).
      const script = fetched.findIndex((p) => p.endsWith('/course.js'));
      assert(script >= 0 && fetched.indexOf('course/index.json') < script, `the index is preloaded: ${fetched.join(' ')}`);
      // The others follow, each once, and the course then lists every lesson: every shipped
      // lesson file is one.
      const shipped = fs.readdirSync(path.join(ROOT, 'lessons')).filter((f) => /^\d\d-.*\.md$/.test(f)).length;
      await until(async () => lessons().length === shipped + 1, 'the other lessons are fetched');
      // The index (preloaded) and the step's lesson are not fetched again.
      const again = lessons();
      assertEqual(new Set(again).size, again.length, 'no lesson fetched twice');
      await openRoute(ctx, '#/lessons');
      await ctx.page.waitForSelector('#course li');
      assertEqual(await ctx.page.$$eval('#course li.lesson-card', (l) => l.length), shipped, 'every lesson is listed');
    },
  },
  {
    name: 'lessons::deep_link_to_a_middle_step',
    async run(ctx) {
      await openRoute(ctx, '#/lessons/fencing/every-access', 'every-access');
      const where = await ctx.text('#place-of');
      assert(where.startsWith('Step 3 of'), `the place: ${where}`);
      assert(await ctx.exists('#prev-step'), 'a middle step has a previous step');
      await checkVerdictRegion(ctx);
      // An unknown step says so rather than showing another.
      await openRoute(ctx, '#/lessons/fencing/no-such-step');
      await ctx.page.waitForSelector('#not-found');
    },
  },
  {
    name: 'lessons::exercise_hints_misconception_success_and_verified_code',
    async run(ctx) {
      await openRoute(ctx, '#/lessons/fencing/two-sources-one-table', 'two-sources-one-table');
      // The start does not pass.
      await ctx.page.click('#check');
      await ctx.page.waitForSelector('#try-again');
      // Hints one at a time, with their count.
      const first = await ctx.text('#hint');
      assert(/hint 1 of \d/.test(first), `the hint button: ${first}`);
      await ctx.page.click('#hint');
      await ctx.page.waitForSelector('#hint-1');
      assert(/hint 2 of \d/.test(await ctx.text('#hint')), 'the next hint is counted');
      // A named wrong approach gets its own hint.
      await ctx.page.selectOption('#fencing-inventory', 'any_source');
      await until(async () => !(await ctx.exists('#try-again')), 'the old check to go stale');
      await ctx.page.click('#check');
      await ctx.page.waitForSelector('#try-again.misconception');
      const hint = await ctx.text('#try-again');
      assert(hint.includes('two counters that know nothing of each other'), `the misconception's hint: ${hint}`);
      // Solving it through the controls: one service's tokens, checked on every access. (The
      // exercise checks the data, not exclusion: the solved run still has overlapping holds,
      // but loses no update.)
      await ctx.page.selectOption('#fencing-inventory', 'one_source');
      await until(async () => !(await ctx.exists('#try-again')), 'the run with one source, and the check stale');
      await ctx.page.selectOption('#fencing-checks-inventory', 'all_accesses');
      await until(async () => (await ctx.count('lost-updates')) === 0, 'the run to lose no update');
      await ctx.page.click('#check');
      await ctx.page.waitForSelector('#success', { timeout: 20000 });
      assert((await ctx.text('#success')).includes('checked on every access'), 'the success message');
      assert(await ctx.exists('#solution'), 'the solution is shown once solved');
      // The learner types their name once: the code carries it, and the next visit remembers it.
      await ctx.page.fill('#learner-name', 'Ada Lovelace');
      const named = (c) => Buffer.from(c.split('.')[1] || '', 'base64url').toString().startsWith('Ada Lovelace\n');
      await until(async () => named(await ctx.value('#completion-code')), 'the code made again with the name');
      const code = await ctx.value('#completion-code');
      assert(code.startsWith('LS2.'), `the completion code: ${code}`);

      // The facilitator pastes the room's codes as a chat gives them: a name before one, one
      // wrapped, the same code twice, a damaged one. The roster says what each is, with counts.
      await openRoute(ctx, '#/facilitator');
      await ctx.page.waitForSelector('#codes');
      const damaged = code.slice(0, -1) + (code.endsWith('0') ? '1' : '0');
      const wrapped = `${code.slice(0, 30)}\n${code.slice(30)}`;
      // And one a chat cut at 60 characters: a refused row under the name it was pasted with.
      await ctx.page.fill('#codes', `Ada: ${wrapped}\n${code}\n${damaged}\nBea: ${code.slice(0, 60)}`);
      await ctx.page.click('#verify-codes');
      await ctx.page.waitForSelector('#roster tr.verified', { timeout: 20000 });
      const results = await ctx.page.$$eval('#roster tbody tr', (rs) => rs.map((r) => r.className));
      assertEqual(JSON.stringify(results), JSON.stringify(['verified', 'refused', 'refused', 'refused']), 'the four codes');
      assert((await ctx.text('#roster tr.verified')).includes('Ada Lovelace'), 'the name in the roster');
      assert((await ctx.text('#roster tbody tr:nth-child(2)')).includes('the same code as row 1'), 'the duplicate');
      const cut = await ctx.text('#roster tbody tr:nth-child(4)');
      assert(cut.startsWith('Bea') && cut.includes('cut short') && !cut.includes('(no name)'), `the cut code's row: ${cut}`);
      assertEqual(await ctx.text('#roster tbody tr:nth-child(4) code.refused-code'), `${code.slice(0, 24)}…`, 'the code shown');
      assertEqual(await ctx.text('#roster-counts li'), 'fencing / two-sources-one-table: 1 verified, 1 refused', 'the counts (the damaged code is unreadable)');
      // The CSV a spreadsheet opens: a header, then one row a code, the code itself last.
      const [download] = await Promise.all([ctx.page.waitForEvent('download'), ctx.page.click('#roster-csv')]);
      const csv = fs.readFileSync(await download.path(), 'utf8').trim().split(/\r?\n/);
      assertEqual(csv.length, 5, `a header and four rows: ${csv.join(' | ')}`);
      assert(/^name,lesson,exercise/i.test(csv[0]), `the header: ${csv[0]}`);
      assert(csv[1].startsWith('Ada Lovelace,fencing,two-sources-one-table,verified') && csv[1].endsWith(code), `the verified row: ${csv[1]}`);
      assert(csv[2].includes('refused') && csv[2].includes('same code as row 1'), `the duplicate's row: ${csv[2]}`);
      // The handout lists the exercise with its link.
      const link = await ctx.attr('[data-exercise="two-sources-one-table"] .link a', 'href');
      assertEqual(link, '#/lessons/fencing/two-sources-one-table', 'the exercise link');

      // Back at the exercise: it says it was solved, with the code, and the name is remembered.
      await openRoute(ctx, '#/lessons/fencing/two-sources-one-table');
      await ctx.page.waitForSelector('#solved-before', { timeout: 20000 });
      assertEqual(await ctx.value('#completion-code'), code, 'the code from before');
      assertEqual(await ctx.value('#learner-name'), 'Ada Lovelace', 'the name typed once');
    },
  },
  {
    name: 'lessons::a_closed_tab_loses_no_exercise_work',
    async run(ctx) {
      await openRoute(ctx, '#/lessons/fencing/two-sources-one-table', 'two-sources-one-table');
      await ctx.page.selectOption('#fencing-inventory', 'any_source');
      await ctx.page.click('#hint');
      await ctx.page.waitForSelector('#hint-1');
      await ctx.frames(2);
      // The tab closes; the same browser opens the exercise again.
      await ctx.page.close();
      const page = await ctx.context.newPage();
      await page.goto(`${ctx.baseURL}#/lessons/fencing/two-sources-one-table`, { waitUntil: 'load' });
      await page.waitForSelector('#view-title[data-place="two-sources-one-table"]', { timeout: 20000 });
      await page.waitForSelector('#hint-1', { timeout: 20000 });
      assertEqual(await page.$eval('#fencing-inventory', (s) => s.value), 'any_source', 'the control as it was left');
      assertEqual(await page.$$eval('#hints li', (l) => l.length), 1, 'the hint revealed');
      ctx.page = page;
    },
  },
  {
    name: 'lessons::open_in_sandbox_keeps_the_learners_scenario',
    async run(ctx) {
      await openRoute(ctx, '#/lessons/two-orders/two-orders', 'two-orders');
      await ctx.page.selectOption('#protocol-online', 'single:old');
      await until(async () => (await ctx.text('#gate-status')).startsWith('Done'), 'the gate to be met');
      const headline = await ctx.text('#verdict-headline');
      await ctx.page.click('#open-in-sandbox');
      await ctx.page.waitForSelector('#editor');
      await until(async () => (await ctx.text('#verdict-headline')) === headline, 'the sandbox to run the same scenario');
      assert(ctx.page.url().endsWith('#/sandbox'), `the address: ${ctx.page.url()}`);
      // The lesson hands over the run alone; the sandbox writes its text, which the editor shows
      // and the toggles agree with.
      assertEqual(await ctx.page.$eval('#protocol-online', (s) => s.value), 'single:old', 'the learner\'s choice in the sandbox');
      const text = await ctx.page.$eval('#editor', (e) => e.value);
      assert(text.includes('name = "online"') && text.includes('service = "old"'), `the editor's text: ${text.slice(0, 400)}`);
    },
  },
  {
    name: 'lessons::a_pasted_lesson_file_is_checked_and_kept',
    async run(ctx) {
      const shipped = fs.readFileSync(path.join(ROOT, 'lessons', '01-two-orders.md'), 'utf8');
      const mine = shipped.replace('id = "two-orders"', 'id = "my-orders"').replace('title = "Two services, two orders"', 'title = "My own orders"');
      assert(mine !== shipped, 'the test lesson differs from the shipped one');
      // A claim the engine contradicts is refused, with its line and reason.
      const broken = mine.replace('overlapping_service_pairs == 1', 'overlapping_service_pairs == 5');
      const line = broken.split('\n').indexOf('overlapping_service_pairs == 5') + 1;
      await openRoute(ctx, '#/lessons');
      await ctx.page.waitForSelector('#course li');
      await ctx.page.fill('#lesson-text', broken);
      await ctx.page.click('#open-lesson');
      await ctx.page.waitForSelector('#lesson-file-errors li', { timeout: 30000 });
      const errors = await ctx.text('#lesson-file-errors');
      assert(errors.includes(`line ${line}`) && errors.includes('overlapping_service_pairs'), `the errors: ${errors}`);
      // A good file opens and joins the course, and stays after a reload.
      await ctx.page.fill('#lesson-text', mine);
      await ctx.page.click('#open-lesson');
      await ctx.page.waitForSelector('#lesson-file-status .opened', { timeout: 30000 });
      await ctx.page.waitForSelector('[data-lesson="my-orders"]');
      await ctx.reload();
      await ctx.page.waitForSelector('[data-lesson="my-orders"]', { timeout: 20000 });
      await ctx.page.click('[data-lesson="my-orders"] h3 a');
      await waitPlace(ctx, 'one-service');
      assert((await ctx.text('#view-title')).length > 0, 'the opened lesson shows its first step');
    },
  },
  {
    name: 'lessons::a_pasted_lessons_sweep_is_plotted_by_the_plot_bundle',
    async run(ctx) {
      // A lesson read in the page has no plot file; the step has its plot drawn on demand.
      const shipped = fs.readFileSync(path.join(ROOT, 'lessons', '06-regions.md'), 'utf8');
      const mine = shipped.replace('id = "regions"', 'id = "my-regions"');
      assert(mine !== shipped, 'the test lesson differs from the shipped one');
      await openRoute(ctx, '#/lessons');
      await ctx.page.waitForSelector('#course li');
      const before = new Set();
      ctx.page.on('request', (r) => before.add(new URL(r.url()).pathname));
      await ctx.page.fill('#lesson-text', mine);
      await ctx.page.click('#open-lesson');
      await ctx.page.waitForSelector('#lesson-file-status .opened', { timeout: 60000 });
      await openRoute(ctx, '#/lessons/my-regions/short-partition', 'short-partition');
      await until(() => ctx.page.$eval('#step-sweep-plot', (i) => i.complete && i.naturalWidth > 0), 'the plot to be drawn', 30000);
      const src = await ctx.page.$eval('#step-sweep-plot', (i) => i.src);
      assert(src.startsWith('data:image/svg+xml,'), `the plot is drawn in the page: ${src.slice(0, 60)}`);
      assert(decodeURIComponent(src).includes('<svg'), 'the plot is an SVG picture');
      assert([...before].some((p) => p.endsWith('/plot_bg.wasm')), 'the plot bundle was loaded for it');
      const rows = await ctx.page.$$eval('#step-sweep-table tbody tr', (r) => r.length);
      assert(rows > 1, 'the numbers are in the table');
    },
  },
  {
    name: 'layout::lesson_first_screen_at_1280x800',
    viewport: { width: 1280, height: 800 },
    async run(ctx) {
      await openRoute(ctx, '#/lessons/fencing/writes-only', 'writes-only');
      for (const sel of ['#narration', '#verdict-headline', '#timeline']) {
        const b = await box(ctx, sel);
        assert(b.top >= 0 && b.top < 800, `${sel} starts at ${b.top}, not on the first screen`);
      }
      const h = await box(ctx, '#verdict-headline');
      assert(h.bottom <= 800, `the headline ends at ${h.bottom}`);
      const t = await box(ctx, '#timeline');
      assert(t.bottom <= 800, `the timeline ends at ${t.bottom}, below the first screen`);
      const scrolled = await ctx.page.evaluate(() => window.scrollY);
      assertEqual(scrolled, 0, 'the page has not scrolled');
    },
  },
  {
    name: 'layout::lesson_stacks_at_360px',
    viewport: { width: 360, height: 800 },
    async run(ctx) {
      await openRoute(ctx, '#/lessons/fencing/writes-only', 'writes-only');
      const n = await box(ctx, '#narration');
      const h = await box(ctx, '#verdict-headline');
      const t = await box(ctx, '#timeline');
      assert(n.top < h.top && h.top < t.top, `order: narration ${n.top}, headline ${h.top}, timeline ${t.top}`);
      assert(n.bottom <= h.top + 1, 'the narration comes before the headline, not beside it');
      const sideways = await ctx.page.evaluate(() => {
        const se = document.scrollingElement || document.documentElement;
        return se.scrollWidth - se.clientWidth;
      });
      assert(sideways <= 1, `the page scrolls sideways by ${sideways}px at 360 px`);
    },
  },
  {
    name: 'layout::sandbox_first_screen_at_1280x800',
    viewport: { width: 1280, height: 800 },
    async run(ctx) {
      await ctx.open('#/sandbox');
      await ctx.page.waitForSelector('#timeline');
      await checkVerdictRegion(ctx);
      const h = await box(ctx, '#verdict-headline');
      assert(h.top >= 0 && h.bottom <= 800, `the headline is at ${h.top}..${h.bottom}`);
      const t = await box(ctx, '#timeline');
      assert(t.top < 800 && t.bottom <= 800, `the timeline is at ${t.top}..${t.bottom}, not within the first screen`);
    },
  },
  {
    name: 'lessons::facilitator_handout_prints_the_exercises_alone',
    async run(ctx) {
      await openRoute(ctx, '#/facilitator');
      await ctx.page.waitForSelector('.handout-exercise');
      const count = await ctx.page.$$eval('.handout-exercise', (es) => es.length);
      assert(count >= 1, 'the handout lists the exercises');
      for (const sel of ['.handout-exercise h4', '.handout-exercise .link a']) {
        assert(await ctx.page.isVisible(sel), `${sel} is shown on screen`);
      }
      await ctx.page.emulateMedia({ media: 'print' });
      assert(!(await ctx.page.isVisible('#codes-section')), 'the checker is left out of the print');
      assert(!(await ctx.page.isVisible('header nav')), 'the navigation is left out of the print');
      assert(!(await ctx.page.isVisible('#print')), 'buttons are left out of the print');
      assert(await ctx.page.isVisible('.handout-exercise h4'), 'the exercises are printed');
      await ctx.page.emulateMedia({ media: 'screen' });
    },
  },
  {
    name: 'a11y::course_view',
    async run(ctx) {
      await openRoute(ctx, '#/lessons');
      await ctx.page.waitForSelector('#course li');
      await axe(ctx, 'course view');
    },
  },
  {
    name: 'a11y::lesson_view',
    async run(ctx) {
      await openRoute(ctx, '#/lessons/two-orders/two-services', 'two-services');
      await axe(ctx, 'lesson view');
      await openRoute(ctx, '#/lessons/fencing/two-sources-one-table', 'two-sources-one-table');
      await ctx.page.click('#hint');
      await ctx.page.click('#check');
      await ctx.page.waitForSelector('#try-again');
      await axe(ctx, 'exercise view');
    },
  },
  {
    name: 'a11y::facilitator_view',
    async run(ctx) {
      await solveExercise(ctx);
      await openRoute(ctx, '#/facilitator');
      await ctx.page.waitForSelector('.handout-exercise');
      await axe(ctx, 'facilitator view');
    },
  },
];
