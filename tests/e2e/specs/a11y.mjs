// axe-core: no serious or critical violations in the default view, with compare and own order
// on, and in the dark colour scheme.
import { AxeBuilder } from '@axe-core/playwright';
import { assert } from '../lib/harness.mjs';
import { turnOnCompare, turnOnOwnOrder } from './views.mjs';

export async function axe(ctx, label) {
  const result = await new AxeBuilder({ page: ctx.page }).analyze();
  const bad = [];
  for (const v of result.violations) {
    const nodes = v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(' | ');
    const line = `[${v.impact}] ${v.id}: ${v.help} (${v.nodes.length} node(s): ${nodes})`;
    if (v.impact === 'serious' || v.impact === 'critical') bad.push(line);
    else ctx.note(`axe ${label}: ${line}`);
  }
  assert(bad.length === 0, `axe ${label}: ${bad.length} serious/critical violation(s):\n      ${bad.join('\n      ')}`);
}

export const tests = [
  {
    name: 'a11y::default_view',
    async run(ctx) {
      await ctx.open();
      await axe(ctx, 'default view');
    },
  },
  {
    name: 'a11y::compare_and_own_order',
    async run(ctx) {
      await ctx.open();
      await turnOnCompare(ctx);
      await turnOnOwnOrder(ctx);
      await axe(ctx, 'compare + own order');
    },
  },
  {
    name: 'a11y::dark_scheme',
    colorScheme: 'dark',
    async run(ctx) {
      await ctx.page.emulateMedia({ colorScheme: 'dark' });
      await ctx.open();
      const dark = await ctx.page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches);
      assert(dark, 'the dark colour scheme is not in effect');
      await turnOnCompare(ctx);
      await turnOnOwnOrder(ctx);
      await axe(ctx, 'dark scheme');
    },
  },
];
