// A recording from real etcd processes (`lockstep record --json`), imported into the sandbox
// through the share panel as a user would: it shows labelled as recorded with the etcd version,
// with the headline `lockstep judge` prints for the same file, the comparison is unavailable,
// and one change of a control simulates the scenario instead, as `lockstep run` would.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { LOCKSTEP, ROOT } from '../lib/cli.mjs';
import { checkHeadlineMatchesEditor } from '../lib/checks.mjs';
import { axe } from './a11y.mjs';

const FIXTURE = path.join(ROOT, 'tests', 'fixtures', 'recording-01.json');

/** `lockstep judge FILE --no-trace`: its first line (the label) and its headline. */
function cliJudge(file) {
  const r = spawnSync(LOCKSTEP, ['judge', file, '--no-trace'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`lockstep judge ${file}: ${r.stderr}`);
  const lines = r.stdout.split('\n');
  const headline = lines.find((l) => l.startsWith('Exclusion '));
  if (!headline) throw new Error(`no headline in lockstep judge's output:\n${r.stdout}`);
  return { label: lines[0], headline };
}

export const tests = [
  {
    name: 'recordings::an_imported_recording_is_labelled_judged_as_the_cli_and_a_toggle_simulates',
    async run(ctx) {
      const expected = cliJudge(FIXTURE);
      await ctx.open('#/sandbox');
      await ctx.pickScenario('05-fencing.toml');
      // The import lives in the studio's bundle: unfolding the panel hands the page over.
      await ctx.unfold('share', '#import-file');
      const before = await ctx.snapshot();
      await ctx.page.setInputFiles('#import-file', FIXTURE);
      await until(async () => (await ctx.text('#import-status')).startsWith('Imported'), 'the recording is imported');
      await ctx.waitChange(before, 'the recording to show');

      const label = await ctx.text('#recorded-label');
      assert(label.includes(expected.label), `the label is the CLI's sentence: ${label}`);
      assert(label.includes('etcd 3.4.23'), `the label names the product and version: ${label}`);
      assert(/last revision \d+/.test(label), `the label gives each service's last revision: ${label}`);
      assertEqual(await ctx.text('#verdict-headline'), expected.headline, 'the headline is `lockstep judge`\'s');
      assert(await ctx.page.isDisabled('#compare'), 'compare is unavailable for a recording');
      assert((await ctx.text('#compare-unavailable')).includes('cannot be run again'), 'the reason is given');
      const events = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')).trace.length;
      assert((await ctx.text('#events > summary')).includes(`${events} events`), `the event list has the file's ${events} events`);
      assert((await ctx.page.$$('#event-table tbody tr')).length > 0, 'the event table shows the trace');
      await axe(ctx, 'a recording');
      await ctx.screenshot('recording');

      // One change of a control: the recording's scenario is simulated, unlabelled.
      const shown = await ctx.snapshot();
      await ctx.page.selectOption('#fencing-orders', 'any_source');
      await ctx.waitChange(shown, 'the run to change after #fencing-orders = any_source', ['counts', 'editor']);
      assertEqual(await ctx.exists('#recorded-label'), false, 'no recorded label on a simulated run');
      assert(!(await ctx.page.isDisabled('#compare')), 'compare is offered again');
      await checkHeadlineMatchesEditor(ctx, 'the recording\'s scenario with fencing any_source');
    },
  },
];
