// Toggles change the run, and the app's verdict is the CLI's for the app's own scenario text.
import { assert, assertEqual } from '../lib/harness.mjs';
import { checkHeadlineMatchesEditor, checkVerdictRegion } from '../lib/checks.mjs';

export const tests = [
  {
    name: 'toggle::partition_off_in_06_restores_exclusion',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('06-partition.toml');
      const before = await ctx.snapshot();
      assert(before.headline.startsWith('Exclusion broken'), `06 should start broken: ${before.headline}`);
      await checkHeadlineMatchesEditor(ctx, '06 as loaded');
      assert(await ctx.page.isChecked('#partition'), '#partition should be checked in 06');
      await ctx.screenshot('partition-on');
      await ctx.page.uncheck('#partition');
      const after = await ctx.waitChange(before, 'the run to change after unchecking #partition');
      assert(after.headline !== before.headline, 'the headline did not change');
      assert(after.headline.startsWith('Exclusion holds'), `without the partition: ${after.headline}`);
      await checkVerdictRegion(ctx);
      await checkHeadlineMatchesEditor(ctx, '06 without the partition');
    },
  },
  {
    name: 'toggle::fencing_in_05_rejects_the_stale_write',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('05-fencing.toml');
      await checkHeadlineMatchesEditor(ctx, '05 as loaded');
      assertEqual(await ctx.value('#fencing-accounts'), 'off', '#fencing-accounts in 05');
      assert((await ctx.count('lost-updates')) > 0, '05 should lose an update without fencing');
      assertEqual(await ctx.count('rejected-writes'), 0, 'rejected writes without fencing');
      await ctx.screenshot('fencing-off');

      let before = await ctx.snapshot();
      await ctx.page.selectOption('#fencing-accounts', 'any_source');
      await ctx.waitChange(before, 'the run to change after #fencing-accounts = any_source', ['counts', 'editor']);
      await checkHeadlineMatchesEditor(ctx, '05 with fencing any_source');

      before = await ctx.snapshot();
      await ctx.page.selectOption('#fencing-checks-accounts', 'all_accesses');
      await ctx.waitChange(before, 'the run to change after #fencing-checks-accounts = all_accesses', [
        'counts',
        'editor',
      ]);
      await checkHeadlineMatchesEditor(ctx, '05 with fencing any_source on all accesses');
      assertEqual(await ctx.count('rejected-writes'), 1, 'rejected writes with fencing on all accesses');
      assertEqual(await ctx.count('lost-updates'), 0, 'lost updates with fencing on all accesses');
    },
  },
  {
    name: 'done_when::08_one_authoritative_lock_restores_exclusion',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('08-staggered-migration.toml');
      const before = await ctx.snapshot();
      assert(before.headline.startsWith('Exclusion broken'), `08 should be broken: ${before.headline}`);
      const lost = await ctx.count('lost-updates');
      assert(lost > 0, `08 should show lost updates > 0, shows ${lost}`);
      await checkHeadlineMatchesEditor(ctx, '08 as loaded');
      await ctx.screenshot('two-services-broken');

      const opts = await ctx.page.$$eval('#protocol-online option', (os) => os.map((o) => o.value));
      assert(opts.includes('single:old'), `#protocol-online has no single:old option: ${opts.join(', ')}`);
      await ctx.page.selectOption('#protocol-online', 'single:old');
      const after = await ctx.waitChange(before, 'the run to change after #protocol-online = single:old');
      assert(after.headline.startsWith('Exclusion holds'), `with one authoritative lock: ${after.headline}`);
      assertEqual(await ctx.count('lost-updates'), 0, 'lost updates with one authoritative lock');
      await checkVerdictRegion(ctx);
      await checkHeadlineMatchesEditor(ctx, '08 with online on single:old');
      await ctx.screenshot('one-lock-holds');
    },
  },
  {
    name: 'toggle::controls_show_the_scenario_in_force_after_reset_and_refusals',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('05-fencing.toml');
      // Pick values by hand, then reset: every select must show the built-in's values again,
      // not the ones last picked.
      for (const v of ['one_source', 'off', 'one_source']) {
        const before = await ctx.snapshot();
        await ctx.page.selectOption('#fencing-accounts', v);
        await ctx.waitChange(before, `the run to change after #fencing-accounts = ${v}`, ['counts', 'editor']);
      }
      await ctx.page.selectOption('#protocol-fast', 'no_lock');
      await ctx.page.waitForSelector('#reset');
      await ctx.page.click('#reset');
      await ctx.page.waitForFunction(() => !document.querySelector('#reset'));
      assertEqual(await ctx.value('#fencing-accounts'), 'off', '#fencing-accounts after reset');
      assertEqual(await ctx.value('#protocol-fast'), 'single:locks', '#protocol-fast after reset');
      assert((await ctx.value('#editor')).includes('fencing = "off"') || !(await ctx.value('#editor')).includes('fencing ='), 'the editor holds the built-in');
      const focused = await ctx.page.evaluate(() => document.activeElement && document.activeElement.id);
      assertEqual(focused, 'scenario', 'focus after Reset');
      await checkHeadlineMatchesEditor(ctx, '05 after reset');

      // A number out of range is refused beside the toggles; the text and the run stay.
      await ctx.pickScenario('06-partition.toml');
      const text = await ctx.value('#editor');
      await ctx.page.fill('#partition-length', '10000000');
      await ctx.page.press('#partition-length', 'Tab');
      await ctx.page.waitForSelector('#toggle-errors');
      assertEqual(await ctx.value('#editor'), text, 'the editor text after a refused toggle');
      assertEqual(await ctx.text('#editor-errors'), '', 'no editor error after a refused toggle');
      assert(!(await ctx.page.isDisabled('#partition')), 'the toggles still work');
      await ctx.screenshot('toggle-refused');
    },
  },
];
