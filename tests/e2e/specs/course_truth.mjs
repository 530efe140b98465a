// The course tells the truth in the page: a control changed back leaves nothing behind, a
// prediction is answered from the run (at once, once committed, with "Show what happens"), a
// step's sweep is drawn beside it, the run's figures
// and the inventory are shown with the run, and every step and exercise is screenshotted at
// 1280×800 for review (target/e2e-artifacts/course-truth--every-place--LESSON--PLACE.png).
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { shippedLessons } from '../lib/checks.mjs';

async function waitPlace(ctx, place) {
  await ctx.page.waitForSelector(`#view-title[data-place="${place}"]`, { timeout: 20000 });
  await ctx.frames(2);
}

/** Opens a place; a step's prediction is skipped ("Just show me") unless `ask` keeps it open. */
async function openPlace(ctx, lesson, place, { ask = false } = {}) {
  await ctx.open(`#/lessons/${lesson}/${place}`);
  await waitPlace(ctx, place);
  if (!ask) await ctx.showRun();
}

/** The course as the page loads it: the lessons' compact form, served beside the site. */
async function course(ctx) {
  await ctx.open('#/lessons');
  await ctx.page.waitForSelector('#course li');
  return { lessons: await shippedLessons(ctx.page) };
}

export const tests = [
  {
    name: 'course_truth::clicking_a_note_opens_its_card',
    async run(ctx) {
      await ctx.open('#/sandbox');
      await ctx.page.waitForSelector('#timeline .note-focus');
      const note = '#timeline .note-focus';
      const label = await ctx.attr(note, 'aria-label');
      await ctx.page.click('#to-start');
      const before = await ctx.text('#playhead-verdict');
      await ctx.page.click(note);
      await until(async () => (await ctx.exists('.card-lead')) && label.includes(await ctx.text('.card-lead')), 'the note\'s card');
      assert((await ctx.attr(note, 'class')).includes('pinned'), 'the clicked note is marked');
      // As with the keyboard, the playhead goes to the note's moment.
      await until(async () => (await ctx.text('#playhead-verdict')) !== before, 'the playhead to move to the note');
      // The words painted beside a tag open its card too: each note with words beside it, clicked
      // just right of its tag, where the words begin.
      const count = await ctx.page.$$eval('#timeline .note-focus', (els) => els.length);
      let opened = 0;
      for (let k = 0; k < count && opened < 2; k += 1) {
        // A fresh page, with no card open.
        await ctx.reload();
        await ctx.page.waitForSelector('#timeline .note-focus');
        assert(!(await ctx.exists('.card-lead')), 'no card open before the click');
        const twin = (await ctx.page.$$('#timeline .note-focus'))[k];
        await twin.scrollIntoViewIfNeeded();
        const box = await twin.boundingBox();
        const words = await twin.getAttribute('aria-label');
        // Another twin there would take the click itself.
        const spot = { x: box.x + box.width + 6, y: box.y + box.height / 2 };
        const on = await ctx.page.evaluate(({ x, y }) => document.elementFromPoint(x, y).tagName, spot);
        if (on !== 'CANVAS') continue;
        await ctx.page.mouse.click(spot.x, spot.y);
        await until(async () => (await ctx.exists('.card-lead')) && words.includes(await ctx.text('.card-lead')), `the card of the note whose words were clicked (${words})`);
        opened += 1;
      }
      assert(opened >= 1, 'a note with its words beside it was clicked');
    },
  },
  {
    // While a committed prediction's run plays, a note it has passed opens its card (the words
    // tell what has happened); an event's card, which names what it led to, waits for the end.
    name: 'course_truth::a_note_the_run_has_passed_opens_its_card_while_it_plays',
    async run(ctx) {
      const c = await course(ctx);
      const found = c.lessons.flatMap((l) => l.steps.filter((s) => s.prediction && !s.recording && s.scenario.duration_ms >= 2000).map((s) => [l.id, s]));
      let shown = 0;
      for (const [lesson, step] of found) {
        const where = `${lesson}/${step.id}`;
        await openPlace(ctx, lesson, step.id, { ask: true });
        await ctx.page.waitForSelector('#predict-0');
        assert(!(await ctx.exists('#event-details')), `${where}: no card before the learner commits`);
        await ctx.page.click('#predict-0');
        await ctx.page.waitForSelector('#event-details');
        // Play on until a note has been passed, or the run has ended.
        await until(async () => (await ctx.exists('#timeline .note-focus')) || (await ctx.exists('#verdict-headline')), `${where}: a note, or the run's end`, 60000);
        if (await ctx.exists('#verdict-headline')) continue;
        // Paused, so that no later note comes in while the card is read.
        await ctx.page.click('#play');
        await until(async () => (await ctx.text('#play')).toLowerCase() === 'play', `${where}: paused`);
        const label = await ctx.attr('#timeline .note-focus', 'aria-label');
        await ctx.page.click('#timeline .note-focus');
        await until(async () => (await ctx.exists('.card-lead')) && label.includes(await ctx.text('.card-lead')), `${where}: the note's card while the run plays`);
        assert(await ctx.exists('#verdict-pending'), `${where}: the verdict still waits`);
        assert(!(await ctx.exists('.card-event')), `${where}: no event's card before the end`);
        shown += 1;
        if (shown >= 2) break;
      }
      assert(shown >= 1, `a step with a note before its end, of ${found.length}`);
    },
  },
  {
    name: 'course_truth::a_control_changed_back_leaves_nothing_behind',
    async run(ctx) {
      // Token chain first (it makes west-locks subordinate), then no lock: the page must show
      // the run of "no lock" alone, gate and all.
      await openPlace(ctx, 'fixed-order', 'ordered-meets-both');
      await ctx.page.selectOption('#protocol-east-only', 'token_chain');
      await until(async () => (await ctx.text('#gate-status')).length > 0, 'the gate to be read');
      await ctx.page.selectOption('#protocol-east-only', 'no_lock');
      await until(async () => (await ctx.value('#protocol-east-only')) === 'no_lock', 'the choice to show');
      await ctx.frames(3);
      const afterChain = await ctx.text('#gate-status');
      const headline = await ctx.text('#verdict-headline');
      // Fresh, with "no lock" alone.
      await openPlace(ctx, 'fixed-order', 'ordered');
      await openPlace(ctx, 'fixed-order', 'ordered-meets-both');
      await ctx.page.selectOption('#protocol-east-only', 'no_lock');
      await until(async () => (await ctx.text('#verdict-headline')) === headline, 'the same run as after the chain');
      assertEqual(await ctx.text('#gate-status'), afterChain, 'the same gate reading');
      assert(afterChain.startsWith('Not yet'), `no lock does not meet the gate: ${afterChain}`);
      // The menu still offers "Lock in all" after the chain was chosen.
      await ctx.page.selectOption('#protocol-east-only', 'token_chain');
      const options = await ctx.page.$$eval('#protocol-east-only option', (os) => os.map((o) => o.value));
      assert(options.includes('all_ordered') && options.includes('all_unordered'), `offered: ${options}`);
    },
  },
  {
    name: 'course_truth::a_starving_change_is_refused_in_words',
    async run(ctx) {
      await openPlace(ctx, 'the-rule', 'inventory');
      await ctx.page.selectOption('#protocol-reports', 'single:replica-locks');
      await until(
        async () => (await ctx.text('#gate-status')).includes('every client class completes at least one operation'),
        'the gate to name the work condition',
      );
      const status = await ctx.text('#gate-status');
      assert(status.startsWith('Not yet') && status.includes('reports'), `the gate: ${status}`);
      assert(await ctx.exists('#class-work li.bad[data-class="reports"]'), 'the starved class is marked beside the run');
      assert((await ctx.text('#lesson-inventory')).startsWith('Inventory check'), 'the inventory is shown with its words');
      assert(await ctx.exists('.verdict.headline.stuck'), 'a run that starved a class is not drawn as a success');
    },
  },
  {
    // The end of a run whose exclusion broke earlier: holding now is not drawn as an all-clear.
    name: 'course_truth::the_end_of_a_broken_run_is_not_green',
    async run(ctx) {
      await ctx.open('#/run?v=1&b=01-two-services.toml');
      await ctx.page.waitForSelector('#to-end');
      await ctx.page.click('#to-end');
      await until(async () => (await ctx.exists('#playhead-earlier')) && (await ctx.text('#playhead-earlier')).includes('broke earlier in this run'), 'the page to say it broke earlier');
      assert(!(await ctx.exists('#playhead-verdict.holds')), 'the end of a broken run is not green');
    },
  },
  {
    // Every step that asks a prediction: before the learner commits, nothing on the page answers
    // it (no verdict, figure, finding, plot, cue, feedback or note and overlap on the timeline,
    // and the playhead cannot move); after the run has played, all of it is there, and a "your
    // turn" change made afterwards does not judge the prediction again. The course list then
    // counts every prediction made.
    name: 'course_truth::no_step_answers_its_prediction_before_the_learner_commits',
    async run(ctx) {
      const c = await course(ctx);
      const asking = c.lessons.flatMap((l) => l.steps.filter((s) => s.prediction).map((s) => [l, s]));
      assert(asking.length >= 20, `${asking.length} steps ask a prediction`);
      const answers = ['#verdict-headline', '#lesson-inventory', '#class-work', '#step-sweep-plot', '#step-sweep-table', '#gate', '#cues li', '#event-details', '#playhead-verdict', '.cue-tick', '#show-outcome'];
      let changed = 0;
      for (const [l, step] of asking) {
        const where = `${l.id}/${step.id}`;
        await openPlace(ctx, l.id, step.id, { ask: true });
        await ctx.page.waitForSelector('#predict-0');
        for (const sel of answers) assert(!(await ctx.exists(sel)), `${where}: ${sel} is shown before the prediction`);
        assert(await ctx.exists('#verdict-pending'), `${where}: the verdict says it waits`);
        const drawn = await ctx.page.$eval('#timeline', (t) => [t.dataset.overlaps, t.dataset.notes, t.dataset.links]);
        assertEqual(drawn.join(' '), '0 0 0', `${where}: overlaps, notes and links drawn before the prediction`);
        await ctx.page.keyboard.press('End');
        await ctx.frames(2);
        assertEqual((await ctx.page.$eval('#timeline', (t) => t.dataset.notes)), '0', `${where}: End shows nothing before the prediction`);
        await ctx.page.click('#predict-0');
        await ctx.page.waitForSelector('#to-end');
        await ctx.page.click('#to-end');
        await until(async () => /^(Right|Not this time)/.test(await ctx.text('#predict-result')), `${where}: the answer after the run`);
        const judged = await ctx.text('#predict-result');
        assert(await ctx.exists('#verdict-headline'), `${where}: the verdict after the run`);
        if (step.sweep) await ctx.page.waitForSelector('#step-sweep-plot');
        if (!step.gate) continue;
        assert(await ctx.exists('#gate'), `${where}: the "your turn" after the run`);
        // The gate's intended change, where it is a class's protocol (a menu), made now.
        const protocols = step.gate.intended.map((e) => e.split(' ')).filter((w) => w[0] === 'protocol' && w.length === 3);
        if (protocols.length !== step.gate.intended.length) continue;
        for (const [, cls, choice] of protocols) await ctx.page.selectOption(`#protocol-${cls}`, choice);
        await until(async () => (await ctx.text('#gate-status')).startsWith('Done'), `${where}: the intended change meets the goal`);
        assertEqual(await ctx.text('#predict-result'), judged, `${where}: the prediction stays as judged on its run`);
        changed += 1;
      }
      assert(changed >= 2, `${changed} steps changed after their prediction`);
      // Every prediction made counts in the course list.
      await ctx.open('#/lessons');
      await ctx.page.waitForSelector('#course li');
      const listed = await ctx.page.$eval('#course', (e) => e.textContent.replace(/\s+/g, ' '));
      for (const l of c.lessons) {
        const n = l.steps.filter((s) => s.prediction).length;
        if (n === 0) continue;
        assert(listed.includes(`${n} of ${n} prediction${n === 1 ? '' : 's'} made`), `${l.id}: ${n} predictions counted in: ${listed}`);
      }
      ctx.note(`${asking.length} predictions, ${changed} changed after`);
    },
  },
  {
    // "Show what happens": absent until the learner commits (a choice, or "Just show me"); then
    // one click puts the playhead at the run's end and the answer on the page, far sooner than
    // the run would play at its speed, and the button goes, its work done.
    name: 'course_truth::show_what_happens_answers_a_committed_prediction_at_once',
    async run(ctx) {
      const c = await course(ctx);
      const found = c.lessons.flatMap((l) => l.steps.filter((s) => s.prediction && !s.recording && s.scenario.duration_ms >= 2000).map((s) => [l.id, s]));
      assert(found.length >= 2, 'two steps ask a prediction of a run of 2 s or more');
      // One step committed to by a choice, another by "Just show me".
      for (const [commit, [lesson, step]] of [['#predict-0', found[0]], ['#show-me', found[1]]]) {
        const where = `${lesson}/${step.id}`;
        await openPlace(ctx, lesson, step.id, { ask: true });
        await ctx.page.waitForSelector('#predict-0');
        assert(!(await ctx.exists('#show-outcome')), `${where}: "Show what happens" before the learner commits`);
        await ctx.page.click(commit);
        await ctx.page.waitForSelector('#show-outcome');
        assert(!(await ctx.exists('#verdict-headline')), `${where}: the verdict while the run plays`);
        assert(/^(You said|Watch the run)/.test(await ctx.text('#predict-result')), `${where}: no answer yet`);
        const end = Number(await ctx.attr('#scrub', 'max'));
        const speed = Number(await ctx.value('#speed'));
        // Real time the run would take to play to its end at the speed the page plays it.
        const playback = end / speed;
        assert(playback >= 4000, `${where}: the run plays ${playback} ms at ${speed}×`);
        assert(Number(await ctx.value('#scrub')) < end, `${where}: the run has not played yet`);
        const clicked = Date.now();
        await ctx.page.click('#show-outcome');
        await until(async () => (await ctx.exists('#verdict-headline')) && /^(Right|Not this time|You watched without predicting)/.test(await ctx.text('#predict-result')), `${where}: the answer at once`, playback / 2);
        const took = Date.now() - clicked;
        assertEqual(Number(await ctx.value('#scrub')), end, `${where}: the playhead is at the run's end`);
        assertEqual(await ctx.text('#play'), 'Play', `${where}: nothing left playing`);
        assert(!(await ctx.exists('#show-outcome')), `${where}: the button stays once the answer is shown`);
        // What the run shows is on the page: the verdict's figures and each class's work.
        assert(!(await ctx.exists('#verdict-pending')) && (await ctx.exists('#class-work')), `${where}: the run's verdict is shown`);
        if (commit === '#show-me') assert((await ctx.text('#predict-result')).includes('The answer:'), `${where}: the answer to a skipped prediction`);
        ctx.note(`${where} after ${commit}: the answer ${took} ms after the click; playing would take ${Math.round(playback)} ms`);
      }
    },
  },
  {
    name: 'course_truth::a_steps_sweep_is_drawn_beside_it',
    async run(ctx) {
      const c = await course(ctx);
      const found = c.lessons.flatMap((l) => l.steps.filter((s) => s.sweep).map((s) => [l.id, s])).find(() => true);
      assert(found, 'some step draws a sweep');
      const [lesson, step] = found;
      await openPlace(ctx, lesson, step.id);
      await ctx.page.waitForSelector('#step-sweep-plot');
      const rows = await ctx.page.$$eval('#step-sweep-table tbody tr', (r) => r.length);
      assertEqual(rows, step.sweep.values.length, 'one row a value');
      // The plot is the course's own picture of it, fetched beside the lesson and drawn.
      await until(() => ctx.page.$eval('#step-sweep-plot', (i) => i.complete && i.naturalWidth > 0), 'the plot to be drawn');
      const src = await ctx.page.$eval('#step-sweep-plot', (i) => i.src);
      assert(src.endsWith(`/course/${lesson}.${step.id}.svg`), `the plot is the course's file: ${src}`);
    },
  },
  // Every step and exercise as the learner first sees it at 1280×800, one test a lesson.
  ...['two-orders', 'lock-in-both', 'fixed-order', 'one-order', 'fencing', 'regions', 'migrations', 'the-rule', 'majority'].map((id) => ({
    name: `course_truth::every_place_of_${id.replace(/-/g, '_')}`,
    viewport: { width: 1280, height: 800 },
    async run(ctx) {
      const c = await course(ctx);
      const l = c.lessons.find((x) => x.id === id);
      assert(l, `the course has the lesson ${id}`);
      for (const p of [...l.steps, ...l.exercises]) {
        await openPlace(ctx, l.id, p.id, { ask: true });
        await ctx.screenshot(p.id, { fullPage: false });
      }
      ctx.note(`${l.steps.length + l.exercises.length} places at 1280×800`);
    },
  })),
];
