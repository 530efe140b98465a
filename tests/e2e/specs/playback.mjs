// Playback: step buttons, keys, scrubbing into and out of a violation, play/pause.
import path from 'node:path';
import { assert, until } from '../lib/harness.mjs';
import { cliHeadline, SCENARIO_DIR } from '../lib/cli.mjs';

const PLAYHEAD = '#playhead-verdict';

async function playhead(ctx) {
  const t = await ctx.text(PLAYHEAD);
  assert(t.startsWith('At t='), `${PLAYHEAD} should begin "At t=" but is ${JSON.stringify(t)}`);
  return t;
}

/** Seconds from "At t=4.044s ..." (or "At t=4044 ms"). */
function playheadSeconds(text) {
  const m = text.match(/^At t=\s*(-?\d+(?:\.\d+)?)\s*(ms|s)?/);
  if (!m) return null;
  return m[2] === 'ms' ? Number(m[1]) / 1000 : Number(m[1]);
}

/** Clicks (or presses) and waits for the playhead text to change; returns the new text. */
async function changes(ctx, action, what) {
  const before = await playhead(ctx);
  await action();
  await until(async () => (await ctx.text(PLAYHEAD)) !== before, `${what} to change ${PLAYHEAD} (was ${JSON.stringify(before)})`);
  await ctx.frames(2);
  return playhead(ctx);
}

async function scrubTo(ctx, value) {
  await ctx.setInputValue('#scrub', value);
  await ctx.frames(2);
  return playhead(ctx);
}

export const tests = [
  {
    name: 'playback::buttons_and_keys_move_the_playhead',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('08-staggered-migration.toml');
      await ctx.page.click('#to-start');
      await ctx.frames(2);
      const start = await playhead(ctx);
      await changes(ctx, () => ctx.page.click('#step-forward'), '#step-forward');
      await changes(ctx, () => ctx.page.click('#step-forward'), '#step-forward (again)');
      await changes(ctx, () => ctx.page.click('#step-back'), '#step-back');

      await ctx.blurToBody();
      await changes(ctx, () => ctx.page.keyboard.press('ArrowRight'), 'ArrowRight on the body');
      await changes(ctx, () => ctx.page.keyboard.press('ArrowLeft'), 'ArrowLeft on the body');
      // Keys that scroll the page drive the playhead only with focus in the run's part of the
      // page, here the timeline.
      await ctx.page.focus('#timeline canvas');
      await changes(ctx, () => ctx.page.keyboard.press('End'), 'End on the timeline');
      const home = await changes(ctx, () => ctx.page.keyboard.press('Home'), 'Home on the timeline');
      assert(home === start, `Home should return to the start (${JSON.stringify(start)}), shows ${JSON.stringify(home)}`);
      await changes(ctx, () => ctx.page.click('#to-end'), '#to-end');
      await changes(ctx, () => ctx.page.click('#to-start'), '#to-start');
    },
  },
  {
    name: 'playback::step_into_and_out_of_the_violation_in_08',
    async run(ctx) {
      const file = '08-staggered-migration.toml';
      const headline = cliHeadline(path.join(SCENARIO_DIR, file));
      const from = Number(headline.match(/from t=(\d+(?:\.\d+)?)s/)[1]);
      await ctx.open();
      await ctx.pickScenario(file);
      const range = await ctx.page.$eval('#scrub', (el) => ({
        type: el.type,
        min: Number(el.min || 0),
        max: Number(el.max || 100),
        step: el.step === 'any' ? 0 : Number(el.step || 1),
      }));
      assert(range.type === 'range', `#scrub should be a range input, is ${range.type}`);
      assert(range.max > range.min, `#scrub has an empty range ${range.min}..${range.max}`);

      // Binary search for the last scrub value before the violation starts (the playhead time
      // grows with the scrub value), then step forward into the violation.
      let lo = range.min;
      let hi = range.max;
      const t0 = playheadSeconds(await scrubTo(ctx, lo));
      assert(t0 !== null, `cannot read a time from ${PLAYHEAD}`);
      const snap = (v) => (range.step ? Math.round((v - range.min) / range.step) * range.step + range.min : v);
      for (let i = 0; i < 40 && hi - lo > (range.step || 1e-6); i++) {
        const mid = snap((lo + hi) / 2);
        if (mid === lo || mid === hi) break;
        const t = playheadSeconds(await scrubTo(ctx, mid));
        if (t !== null && t < from - 0.005) lo = mid;
        else hi = mid;
      }
      let text = await scrubTo(ctx, lo);
      ctx.note(`scrubbed to ${lo} (${range.min}..${range.max}): ${text.slice(0, 80)}`);
      let steps = 0;
      while (!text.includes('Exclusion broken')) {
        assert(steps++ < 300, `300 steps forward from ${JSON.stringify(text)} never showed "Exclusion broken"`);
        text = await changes(ctx, () => ctx.page.click('#step-forward'), '#step-forward');
      }
      await ctx.screenshot('inside-violation');
      steps = 0;
      while (text.includes('Exclusion broken')) {
        assert(steps++ < 300, '300 steps back never left the violation');
        text = await changes(ctx, () => ctx.page.click('#step-back'), '#step-back');
      }
      assert(text.startsWith('At t='), text);

      // #to-end jumps to the end of the range.
      await ctx.page.click('#to-end');
      await ctx.frames(2);
      const endValue = Number(await ctx.value('#scrub'));
      assert(endValue === range.max, `#to-end should move #scrub to its max ${range.max}, it is at ${endValue}`);
    },
  },
  {
    name: 'playback::play_toggles_pause',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('08-staggered-migration.toml');
      await ctx.page.click('#to-start');
      const label = async () => (await ctx.text('#play')).toLowerCase();
      assert((await label()).includes('play'), `#play should say Play first, says ${await label()}`);
      await ctx.page.click('#play');
      await until(async () => (await label()).includes('pause'), '#play to say Pause after a click');
      await ctx.page.click('#play');
      await until(async () => (await label()).includes('play') && !(await label()).includes('pause'), '#play to say Play again');
      // Space on the timeline toggles too.
      await ctx.page.focus('#timeline canvas');
      await ctx.page.keyboard.press('Space');
      await until(async () => (await label()).includes('pause'), 'Space on the timeline to start playing');
      await ctx.page.keyboard.press('Space');
      await until(async () => !(await label()).includes('pause'), 'Space on the timeline to pause');
    },
  },
];
