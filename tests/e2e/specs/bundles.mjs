// The page's bundles: the sandbox, a permalink and the embed view each download only their own
// bundle; the sandbox's heavier panels (the sweep, the explorer, sharing and exports) hand the
// page over to the course's bundle, which goes on with the same run at the same place.
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { LOCKSTEP, SCENARIO_DIR } from '../lib/cli.mjs';

const BUNDLES = ['app', 'course', 'embed'];

/** Records which of the page's bundles' wasm files the browser fetches (in `page`, or the test's). */
function watchBundles(ctx, page = ctx.page) {
  const fetched = [];
  page.on('request', (r) => {
    const m = /\/(\w+)_bg\.wasm$/.exec(new URL(r.url()).pathname);
    if (m && BUNDLES.includes(m[1])) fetched.push(m[1]);
  });
  return fetched;
}

export const tests = [
  {
    name: 'bundles::the_sandbox_downloads_its_own_bundle_and_a_panel_hands_the_run_over',
    async run(ctx) {
      const fetched = watchBundles(ctx);
      await ctx.open('#/sandbox');
      assertEqual(JSON.stringify(fetched), '["app"]', 'the sandbox fetched only its own bundle');
      await ctx.pickScenario('05-fencing.toml');
      // Move the playhead away from the end and change the scenario, so that the hand-over has
      // something to carry beyond the scenario's name.
      const max = Number(await ctx.attr('#scrub', 'max'));
      await ctx.setInputValue('#scrub', String(Math.round(max / 3)));
      await ctx.settle();
      assert((await ctx.text('#playhead-verdict')).startsWith('At t='), await ctx.text('#playhead-verdict'));
      const text = await ctx.value('#editor');
      await ctx.setInputValue('#editor', text.replace(/^seed\s*=\s*\d+/m, 'seed = 4242'));
      await until(async () => (await ctx.value('#editor')).includes('seed = 4242'), 'the edit');
      await ctx.frames(2);
      const before = await ctx.snapshot();
      const hash = await ctx.page.evaluate(() => location.hash);

      await ctx.unfold('share', '#share-link');
      assertEqual(JSON.stringify(fetched), '["app","course"]', 'unfolding the panel fetched the course bundle');
      const after = await ctx.snapshot();
      for (const key of Object.keys(before)) {
        assertEqual(after[key], before[key], `${key} after the hand-over`);
      }
      assertEqual(await ctx.page.evaluate(() => location.hash), hash, 'the address');
      assertEqual(await ctx.page.evaluate(() => document.activeElement?.closest('details')?.id), 'share', 'the focus is on the unfolded panel');
      assert(!(await ctx.exists('#notice')), 'no notice: the hand-over is not a link being opened');
      // Once the course's bundle has the page, the other panels unfold without another download.
      await ctx.unfold('lab', '#sweep-param');
      await ctx.unfold('explore', '#explore-run');
      assertEqual(JSON.stringify(fetched), '["app","course"]', 'no other download');
      // The user's own work is still saved: a reload restores the edited scenario.
      await ctx.reload();
      assert((await ctx.value('#editor')).includes('seed = 4242'), 'the edit survives a reload');
    },
  },
  {
    name: 'bundles::an_embed_downloads_only_the_embed_bundle',
    async run(ctx) {
      const fetched = watchBundles(ctx);
      const r = spawnSync(LOCKSTEP, ['export', path.join(SCENARIO_DIR, '01-two-services.toml'), '--format', 'json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      const digest = JSON.parse(r.stdout).digest;
      await ctx.open(`#/embed?v=1&b=01-two-services.toml&d=${digest}&controls=fencing%20orders`);
      await ctx.need('#embed-headline');
      assert(!(await ctx.exists('#notice')), 'the embed opened its run without a notice');
      assertEqual(JSON.stringify(fetched), '["embed"]', 'the embed fetched only its own bundle');
      // A sandbox address typed into the embed's page loads the sandbox's bundle instead.
      await ctx.page.evaluate(() => { location.hash = '#/sandbox'; });
      await until(async () => fetched.includes('app') && (await ctx.exists('#editor')), 'the sandbox after the embed');
    },
  },
  {
    name: 'bundles::a_custom_scenario_embeds_as_json_and_opens_in_the_full_app',
    async run(ctx) {
      await ctx.open('#/sandbox');
      await ctx.pickScenario('06-partition.toml');
      const text = await ctx.value('#editor');
      await ctx.setInputValue('#editor', text.replace(/^name\s*=.*$/m, 'name = "Our own partition"'));
      await ctx.settle();
      await ctx.unfold('share', '#embed-code');
      const headline = await ctx.text('#verdict-headline');
      const snippet = await ctx.value('#embed-code');
      const src = /src="([^"]+)"/.exec(snippet)[1].replaceAll('&amp;', '&');
      assert(/[?&]j=/.test(src) && !/[?&]c=/.test(src), `the embed carries the scenario as JSON: ${src}`);
      const digest = new URL(src.replace('#/embed?', '?')).searchParams.get('d');

      // Each address opens in a fresh page, as a reader's browser would open it.
      const ready = (page) => page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
      const embed = await ctx.context.newPage();
      const fetchedEmbed = watchBundles(ctx, embed);
      await embed.goto(`${ctx.baseURL}${src.slice(src.indexOf('#'))}`, { waitUntil: 'load' });
      await ready(embed);
      await embed.waitForSelector('#embed-headline');
      assertEqual(await embed.$('#notice'), null, 'the embed opened it without a notice');
      const strip = (t) => t.replace(/^[✓✗]\s*/, '').trim();
      assertEqual(strip(await embed.textContent('#embed-headline')), strip(headline), 'the same verdict in the embed');
      assertEqual(JSON.stringify(fetchedEmbed), '["embed"]', "the embed's bundle only");

      const href = await embed.getAttribute('#open-full', 'href');
      assert(/[?&]j=/.test(href) && href.includes(`d=${digest}`), href);
      const full = await ctx.context.newPage();
      const fetchedFull = watchBundles(ctx, full);
      await full.goto(href, { waitUntil: 'load' });
      await ready(full);
      await full.waitForSelector('#verdict-headline');
      assertEqual(JSON.stringify(fetchedFull), '["course"]', 'a JSON link opens in the course bundle');
      assertEqual(await full.$('#notice'), null, 'the same run: no notice');
      assertEqual(strip(await full.textContent('#verdict-headline')), strip(headline), 'the same verdict in the full app');
      assert((await full.$eval('#editor', (e) => e.value)).includes('name = "Our own partition"'), 'the editor shows it as TOML');

      // An embed address with the scenario as TOML (the sandbox's own link form) still works:
      // the course's bundle, which reads TOML, draws it.
      const runLink = await ctx.value('#share-link');
      assert(/[?&]c=/.test(runLink), runLink);
      const older = await ctx.context.newPage();
      const fetchedOlder = watchBundles(ctx, older);
      await older.goto(runLink.replace('#/run?', '#/embed?'), { waitUntil: 'load' });
      await ready(older);
      await older.waitForSelector('#embed-headline');
      assertEqual(await older.$('#notice'), null, 'a TOML embed opens without a notice');
      assertEqual(strip(await older.textContent('#embed-headline')), strip(headline), 'the same verdict');
      assertEqual(JSON.stringify(fetchedOlder), '["course"]', 'a TOML embed is drawn by the course bundle');
      assertEqual(await older.$('header.top'), null, 'as the embed view, without the page header');
    },
  },
];
