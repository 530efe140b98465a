// Compare mode, per-service own order, the event table and a narrow viewport.
import { assert } from '../lib/harness.mjs';
import { cliJson, tempScenario } from '../lib/cli.mjs';
import { checkVerdictRegion } from '../lib/checks.mjs';

export async function turnOnCompare(ctx) {
  const opts = await ctx.page.$$eval('#compare option', (os) => os.map((o) => o.value));
  const choice = opts.find((v) => v !== '');
  assert(choice !== undefined, `#compare has no non-empty option: ${JSON.stringify(opts)}`);
  await ctx.page.selectOption('#compare', choice);
  await ctx.page.waitForSelector('#timeline-b', { state: 'visible' });
  await ctx.page.waitForSelector('#compare-verdict', { state: 'visible' });
  await ctx.settle();
  return choice;
}

export async function turnOnOwnOrder(ctx) {
  await ctx.page.check('#own-order');
  await ctx.page.waitForSelector('#own-order-view', { state: 'visible' });
  await ctx.settle();
}

export const tests = [
  {
    name: 'views::compare_shows_a_second_timeline_and_a_summary',
    async run(ctx) {
      await ctx.open();
      const choice = await turnOnCompare(ctx);
      ctx.note(`compared with ${choice}`);
      const summary = await ctx.text('#compare-summary');
      assert(summary.length > 0, '#compare-summary is empty');
      const cv = await ctx.text('#compare-verdict');
      assert(cv.length > 0, '#compare-verdict is empty');
      assert(await ctx.page.isVisible('#timeline'), '#timeline is hidden in compare mode');
      await checkVerdictRegion(ctx);
    },
  },
  {
    name: 'views::own_order_lists_one_order_per_service',
    async run(ctx) {
      await ctx.open();
      const json = cliJson(tempScenario(await ctx.value('#editor')), await ctx.value('#seed'));
      const services = json.names.services;
      await turnOnOwnOrder(ctx);
      const lists = await ctx.page.$$eval('#own-order-view ol', (ls) => ls.length);
      assert(
        lists === services.length,
        `#own-order-view should hold one <ol> per service (${services.join(', ')}), holds ${lists}`,
      );
      const text = await ctx.text('#own-order-view');
      for (const s of services) assert(text.includes(s), `#own-order-view does not name service ${s}`);
    },
  },
  {
    name: 'views::event_table_has_rows',
    async run(ctx) {
      await ctx.open();
      await ctx.need('details#events');
      const open = await ctx.page.$eval('details#events', (d) => d.open);
      if (!open) await ctx.page.click('details#events > summary');
      await ctx.page.waitForSelector('#event-table', { state: 'visible' });
      const rows = await ctx.page.$$eval('#event-table tbody tr, #event-table > tr', (rs) => rs.length);
      assert(rows > 0, '#event-table has no body rows');
      ctx.note(`${rows} rows`);
    },
  },
  {
    name: 'layout::no_horizontal_scroll_at_360px',
    viewport: { width: 360, height: 800 },
    async run(ctx) {
      await ctx.open();
      await checkVerdictRegion(ctx);
      const m = await ctx.page.evaluate(() => {
        const se = document.scrollingElement || document.documentElement;
        return {
          docScroll: se.scrollWidth,
          docClient: se.clientWidth,
          bodyScroll: document.body.scrollWidth,
          bodyClient: document.body.clientWidth,
          wide: [...document.querySelectorAll('body *')]
            .filter((el) => el.getBoundingClientRect().right > se.clientWidth + 1)
            .slice(0, 5)
            .map((el) => `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : ''} right=${Math.round(el.getBoundingClientRect().right)}`),
        };
      });
      assert(
        m.docScroll <= m.docClient + 1 && m.bodyScroll <= m.bodyClient + 1,
        `the page scrolls sideways at 360 px: document ${m.docScroll} > ${m.docClient} or body ${m.bodyScroll} > ${m.bodyClient}; widest: ${m.wide.join('; ')}`,
      );
    },
  },
];
