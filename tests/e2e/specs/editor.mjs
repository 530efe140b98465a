// The scenario editor and the stored state.
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { checkVerdictRegion } from '../lib/checks.mjs';

export const tests = [
  {
    name: 'editor::malformed_edit_shows_a_located_error_and_keeps_the_run',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('08-staggered-migration.toml');
      const before = await ctx.snapshot();
      const text = before.editor;
      assert(/^duration_ms\s*=/m.test(text), `#editor has no duration_ms line:\n${text.slice(0, 400)}`);
      const broken = text.replace(/^duration_ms\s*=.*$/m, 'duration_ms = "oops"');
      await ctx.page.fill('#editor', broken);
      const errors = await until(async () => {
        const t = await ctx.text('#editor-errors');
        return t.length > 0 ? t : null;
      }, '#editor-errors to show an error');
      assertEqual(await ctx.attr('#editor-errors', 'role'), 'alert', '#editor-errors role');
      assert(
        /line\s*\d+|duration_ms/i.test(errors),
        `#editor-errors should name a line or the field, shows ${JSON.stringify(errors)}`,
      );
      ctx.note(`error shown: ${errors.slice(0, 160)}`);
      // The edit reaches the run only through the reader's answer, which shows these errors and
      // clears the editor's aria-busy in the same update that would have replaced the run
      // (ui::App::reduce, Action::Read). Once both are drawn that update has happened: a run
      // replaced by the broken text would already show in the headline below.
      await until(async () => (await ctx.attr('#editor', 'aria-busy')) === null, 'the reader to have answered');
      await ctx.frames(2);
      assertEqual(await ctx.text('#verdict-headline'), before.headline, '#verdict-headline after an invalid edit');
      await checkVerdictRegion(ctx);
      assert(await ctx.page.isVisible('#editor-errors'), '#editor-errors is not visible');
    },
  },
  {
    name: 'persistence::the_text_is_stored_before_the_engine_runs_it',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('05-fencing.toml');
      const text = await ctx.value('#editor');
      const edited = text.replace(/^name\s*=.*$/m, 'name = "Stored before it runs"');
      // Typing fires the input handler synchronously; storage is read in the same task, before
      // the page has had any chance to run the scenario and render.
      const stored = await ctx.page.evaluate((value) => {
        const editor = document.querySelector('#editor');
        editor.value = value;
        editor.dispatchEvent(new Event('input', { bubbles: true }));
        return localStorage.getItem('lockstep.state.v1');
      }, edited);
      assert(stored !== null, 'nothing stored after typing');
      const saved = JSON.parse(stored);
      assertEqual(saved.text, edited, 'stored text right after typing');
      assertEqual(saved.source, '05-fencing.toml', 'stored source right after typing');
    },
  },
  {
    name: 'persistence::reload_keeps_the_scenario_and_a_corrupt_store_is_set_aside',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('03-fixed-order.toml');
      const editor = await ctx.value('#editor');
      const headline = await ctx.text('#verdict-headline');
      await ctx.reload();
      assertEqual(await ctx.value('#scenario'), '03-fixed-order.toml', '#scenario after a reload');
      assertEqual(await ctx.value('#editor'), editor, '#editor after a reload');
      assertEqual(await ctx.text('#verdict-headline'), headline, '#verdict-headline after a reload');

      await ctx.page.evaluate(() => localStorage.setItem('lockstep.state.v1', '{not json'));
      await ctx.reload();
      assert(await ctx.page.isVisible('#verdict'), '#verdict is not shown with a corrupt stored state');
      await checkVerdictRegion(ctx);
      const notice = await ctx.text('#notice');
      assert(notice.length > 0, '#notice is empty after loading a corrupt stored state');
      assert(
        /stor|sav|set aside|ignor|discard|reset|corrupt|could not|unreadable|invalid/i.test(notice),
        `#notice should say the stored value was set aside, says ${JSON.stringify(notice)}`,
      );
      assert(await ctx.page.isVisible('#notice'), '#notice is not visible');
      ctx.note(`notice: ${notice.slice(0, 160)}`);
    },
  },
];
