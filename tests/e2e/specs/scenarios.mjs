// Every built-in scenario shows the verdict headline the CLI prints for the same file and seed.
import path from 'node:path';
import { assert, assertEqual } from '../lib/harness.mjs';
import { builtinScenarios, cliHeadline, SCENARIO_DIR } from '../lib/cli.mjs';
import { checkVerdictRegion } from '../lib/checks.mjs';

export const tests = builtinScenarios().map((file) => ({
  name: `scenario_headline::${file}`,
  async run(ctx) {
    const expected = cliHeadline(path.join(SCENARIO_DIR, file));
    await ctx.open();
    await ctx.pickScenario(file);
    assertEqual(await ctx.value('#scenario'), file, '#scenario value after picking');
    const actual = await ctx.text('#verdict-headline');
    if (actual !== expected) {
      const seed = await ctx.value('#seed').catch(() => '?');
      assertEqual(actual, expected, `#verdict-headline for ${file} (the app's #seed is ${seed})`);
    }
    await checkVerdictRegion(ctx);
    assert((await ctx.value('#editor')).trim().length > 0, '#editor is empty');
  },
}));
