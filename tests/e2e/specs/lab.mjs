// The lab: a sweep runs in a worker with progress and Cancel, the plot and its table agree, a
// point lists its broken seeds and a seed opens that run. That the work runs off the main thread
// is checked by what the page does, not by a clock: the request goes to a lab worker and every
// answer comes back from it. Long tasks on the main thread are printed as a note only, since a
// loaded machine can stretch any task.
import { assert, assertEqual, until } from '../lib/harness.mjs';

/**
 * Wraps the page's `Worker` before it loads so that every worker's script, each message posted
 * to it and each message it sends back are recorded on `window.__workers`.
 */
async function watchWorkers(ctx) {
  await ctx.page.addInitScript(() => {
    const Real = window.Worker;
    window.__workers = [];
    window.Worker = class extends Real {
      constructor(url, options) {
        super(url, options);
        const rec = { url: String(url), posted: 0, received: 0 };
        window.__workers.push(rec);
        this.rec = rec;
        this.addEventListener('message', () => { rec.received += 1; });
      }
      postMessage(...args) {
        this.rec.posted += 1;
        return super.postMessage(...args);
      }
    };
  });
}

/** The recorded lab workers: script, messages posted to it, messages received from it. */
async function labWorkers(ctx) {
  return ctx.page.evaluate(() => window.__workers.filter((w) => /lab/.test(w.url)));
}

/** Installs a long-task observer; read with `longTasks`. */
async function watchLongTasks(ctx) {
  await ctx.page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__long.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: 'longtask', buffered: false });
  });
}

async function openLab(ctx) {
  await ctx.unfold('lab', '#sweep-param');
}

export const tests = [
  {
    name: 'lab::a_sweep_runs_in_a_worker_and_opens_a_broken_seed',
    async run(ctx) {
      await watchWorkers(ctx);
      await ctx.open('#/sandbox');
      await ctx.pickScenario('08-staggered-migration.toml');
      await openLab(ctx);
      await ctx.page.selectOption('#sweep-param', 'overlap_ms');
      assertEqual(await ctx.value('#sweep-values'), '0,1500,3000,4500,6000', 'values around the scenario, suggested');
      await ctx.setInputValue('#sweep-seeds', '120');
      await watchLongTasks(ctx);
      const t0 = await ctx.page.evaluate(() => performance.now());
      await ctx.page.click('#sweep-run');
      // Progress shows while the worker runs (it may finish before a poll sees it on a fast
      // machine, so the final count is what is asserted).
      await until(async () => (await ctx.exists('#sweep-table')), 'the sweep to finish', 60000);
      // The worker ran from the click until its answer arrived; drawing the answer comes after.
      const t1 = Number(await ctx.attr('html', 'data-lab-answer'));
      const long = await ctx.page.evaluate(([a, b]) => window.__long.filter((t) => t.start >= a && t.start < b), [t0, t1]);
      ctx.note(`main-thread long tasks while the worker ran: ${JSON.stringify(long)}`);
      const workers = await labWorkers(ctx);
      assertEqual(workers.length, 1, `one lab worker: ${JSON.stringify(workers)}`);
      assertEqual(workers[0].posted, 1, 'the sweep was posted to the worker');
      // Progress at least once per value, then the answer: all from the worker.
      assert(workers[0].received >= 6, `progress and the answer came from the worker: ${JSON.stringify(workers)}`);
      ctx.note(`sweep of 5 x 120 runs in ${(t1 - t0).toFixed(0)} ms`);
      const rows = await ctx.page.$$eval('#sweep-table tbody tr', (r) => r.map((x) => x.textContent));
      assertEqual(rows.length, 5, 'one row per value');
      await until(async () => (await ctx.attr('#sweep-plot', 'data-drawn')) === 'true', 'the plot is drawn');
      // The same sweep asked again answers from memory, at once: no progress is shown.
      await ctx.page.click('#sweep-run');
      const again = await ctx.page.evaluate(() => [!!document.querySelector('#sweep-progress'), !!document.querySelector('#sweep-table')]);
      assertEqual(JSON.stringify(again), '[false,true]', 'the remembered sweep');
      // The last value overlaps most: click its point on the plot (the right end of the axis),
      // then its first broken seed.
      const box = await ctx.page.$eval('#sweep-plot', (c) => { const r = c.getBoundingClientRect(); return { w: r.width, h: r.height }; });
      await ctx.page.click('#sweep-plot', { position: { x: box.w * (708 / 720) - 1, y: box.h / 2 } });
      await ctx.need('#sweep-broken .seed');
      assert((await ctx.text('#sweep-broken')).startsWith('overlap_ms = 6000'), await ctx.text('#sweep-broken'));
      assert((await ctx.attr('#sweep-table tbody tr:last-child', 'class') || '').includes('picked'), 'the row of the point is marked');
      const seedText = await ctx.text('#sweep-broken .seed');
      await ctx.page.click('#sweep-broken .seed');
      await until(async () => (await ctx.exists('#notice')) && (await ctx.text('#notice')).includes(seedText), 'the seed opens');
      assert((await ctx.text('#verdict-headline')).includes('Exclusion broken'), 'the opened run breaks exclusion');
      await ctx.screenshot('lab');
    },
  },
  {
    name: 'lab::a_running_sweep_can_be_cancelled',
    async run(ctx) {
      await ctx.open('#/sandbox');
      await ctx.pickScenario('08-staggered-migration.toml');
      await openLab(ctx);
      await ctx.setInputValue('#sweep-seeds', '2000');
      await ctx.page.click('#sweep-run');
      await ctx.need('#sweep-progress');
      await until(async () => Number(await ctx.attr('#sweep-progress', 'value')) > 0, 'progress moves');
      await ctx.page.click('#sweep-cancel');
      await until(async () => (await ctx.text('#sweep-status')).includes('Cancelled'), 'cancelled');
      assert(!(await ctx.exists('#sweep-progress')), 'no progress after Cancel');
    },
  },
  {
    name: 'lab::exploring_finds_the_shortest_way_two_services_break_and_shows_it',
    async run(ctx) {
      await watchWorkers(ctx);
      await ctx.open('#/sandbox');
      await ctx.pickScenario('01-two-services.toml');
      await ctx.unfold('explore', '#explore-run');
      await watchLongTasks(ctx);
      const t0 = await ctx.page.evaluate(() => performance.now());
      await ctx.page.click('#explore-shortest');
      await until(async () => (await ctx.exists('#notice')) && (await ctx.text('#notice')).includes('shortest way'), 'the counterexample opens', 60000);
      const t1 = Number(await ctx.attr('html', 'data-lab-answer'));
      assert((await ctx.text('#notice')).includes('6 steps'), await ctx.text('#notice'));
      assert((await ctx.text('#explore-status')).includes('Not safe'), await ctx.text('#explore-status'));
      assert((await ctx.text('#verdict-headline')).includes('Exclusion broken'), 'the replayed path breaks exclusion');
      const long = await ctx.page.evaluate(([a, b]) => window.__long.filter((t) => t.start >= a && t.start < b), [t0, t1]);
      ctx.note(`main-thread long tasks while the worker explored: ${JSON.stringify(long)}`);
      const workers = await labWorkers(ctx);
      assertEqual(workers.length, 1, `one lab worker: ${JSON.stringify(workers)}`);
      assertEqual(workers[0].posted, 1, 'the exploration was posted to the worker');
      assert(workers[0].received >= 1, `the answer came from the worker: ${JSON.stringify(workers)}`);
      await ctx.screenshot('counterexample');
    },
  },
  {
    name: 'lab::exploring_the_subordinate_chain_finds_it_safe',
    async run(ctx) {
      await ctx.open('#/sandbox');
      await ctx.pickScenario('04-subordinate.toml');
      await ctx.unfold('explore', '#explore-run');
      await ctx.page.click('#explore-run');
      await until(async () => (await ctx.exists('#explore-status')) && (await ctx.text('#explore-status')).startsWith('Safe'), 'the answer', 60000);
      assert((await ctx.text('#explore-status')).includes('4040 states'), await ctx.text('#explore-status'));
      // Asked again, the same scenario answers from memory, at once: no progress is shown.
      await ctx.page.click('#explore-run');
      const shown = await ctx.page.evaluate(() => [!!document.querySelector('#explore-progress'), document.querySelector('#explore-status')?.textContent || '']);
      ctx.note(`after asking again: ${JSON.stringify(shown)}`);
      assert(!shown[0] && shown[1].startsWith('Safe'), `the remembered answer: ${JSON.stringify(shown)}`);
    },
  },
];
