// The page's bundles: the sandbox, a permalink and the embed view each download only their own
// bundle; the sandbox's editor reads its TOML in a worker loaded with the first edit; the
// sandbox's heavier panels (the sweep, the explorer, sharing and exports) hand the page over to
// the studio's bundle, which goes on with the same run at the same place; the lessons have a
// bundle of their own, without the sandbox's editor and panels.
import path from 'node:path';
import zlib from 'node:zlib';
import fs from 'node:fs';
import os from 'node:os';
import { spawn, spawnSync } from 'node:child_process';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { LOCKSTEP, ROOT, SCENARIO_DIR } from '../lib/cli.mjs';
import { serveHtml } from '../lib/server.mjs';
import { watchRequests } from '../lib/quiet.mjs';
import { siteSettings } from '../../../scripts/site-check.mjs';
import { manifest, routerCode } from '../../../scripts/site.mjs';

/** This environment without the site's build settings (scripts/site-env.sh): a new shell's. */
function plainShell() {
  const env = { ...process.env, RUST_BACKTRACE: '0' };
  for (const name of Object.keys(siteSettings())) delete env[name];
  return env;
}

const HOW = 'source scripts/site-env.sh && trunk build --release';

const SITE = manifest();
const BUNDLES = SITE.bundles.map((b) => b.name);
/** The bundle the page opens an address with: the page's own router (site.json). */
const bundleOf = (address) => (0, eval)(routerCode(SITE))(address).bundle;

/** Records which of the page's bundles' wasm files the browser fetches (in `page`, or the test's). */
function watchBundles(ctx, page = ctx.page) {
  const fetched = [];
  page.on('request', (r) => {
    const m = /\/(\w+)_bg\.wasm$/.exec(new URL(r.url()).pathname);
    if (m && BUNDLES.includes(m[1])) fetched.push(m[1]);
  });
  return fetched;
}

/** The split bundles' state (scripts/split-glue.js), once the rest of the code has arrived. */
async function splitState(ctx) {
  await until(async () => ctx.page.evaluate(() => Boolean(globalThis.__lockstepSplit && globalThis.__lockstepSplit.loaded)), 'the rest of the bundle loaded');
  return ctx.page.evaluate(() => ({ syncLoads: globalThis.__lockstepSplit.syncLoads, slot: globalThis.__lockstepSplit.firstSlot }));
}

export const tests = [
  {
    // The sandbox's, the lessons' and the embed's bundles are split by what their first view runs
    // (src/bin/split.rs): the view is drawn by the first part alone and the rest follows. A
    // first view that called into the rest would have loaded it at once (a sync load): the
    // profile in scripts/split/ is then out of date (node scripts/split-profile.mjs).
    name: 'bundles::a_first_view_runs_on_the_first_part_of_its_bundle_and_the_rest_follows',
    serviceWorkers: 'block',
    async run(ctx) {
      const addresses = ['#/sandbox', '#/run?v=1&b=06-partition.toml', '#/lessons', '#/lessons/two-orders', '#/lessons/fencing/two-sources', '#/lessons/regions/fewer-services', '#/lessons/migrations', '#/embed?v=1&b=05-fencing.toml&controls=fencing%20accounts', '#/embed?v=1&b=09-migration-held.toml'];
      // The usual order: the first part, the view, then the rest.
      const order = [];
      ctx.page.on('request', (r) => {
        const file = new URL(r.url()).pathname.split('/').pop();
        if (/_(bg|rest)\.wasm$/.test(file)) order.push(file);
      });
      for (const address of addresses) {
        order.length = 0;
        await ctx.page.goto('about:blank');
        await ctx.open(address);
        await splitState(ctx);
        const bundle = bundleOf(address);
        assertEqual([...new Set(order)].join(' '), `${bundle}_bg.wasm ${bundle}_rest.wasm`, `${address}: the first part, then the rest`);
      }
      // With the rest held back, the view and what follows it call none of it: a call would
      // load it at once. Each address on a first visit and on a return, with what the first
      // saved.
      const requests = watchRequests(ctx.page);
      let refused = 0;
      await ctx.page.route('**/*_rest.wasm', (route) => {
        if (route.request().resourceType() !== 'fetch') return route.continue();
        refused += 1;
        return route.abort();
      });
      await ctx.page.evaluate(() => localStorage.clear());
      for (const address of addresses) {
        for (const visit of ['first', 'return']) {
          const before = refused;
          if (visit === 'first') {
            // A new document each time: a change of the fragment alone loads nothing.
            await ctx.page.goto('about:blank');
            await ctx.open(address);
          } else await ctx.reload();
          // What follows the view: the loader asks for the rest (refused here), and a lesson's
          // view fetches the other lessons and the folder's index and reads them. Once the rest
          // was asked for and the page has no request in flight and nothing queued, all of that
          // has run; the page starts nothing more without the user (no timer of its own). A
          // call into the rest on the way is a load at once, counted below.
          await until(async () => refused > before, `${address} (${visit} visit): the rest asked for`);
          await requests.quiet(ctx.page, `${address} (${visit} visit): what follows the view to be done`);
          const state = await ctx.page.evaluate(() => ({ ...globalThis.__lockstepSplit, hits: undefined }));
          assertEqual(state.syncLoads, 0, `${address} (${visit} visit): the first view called no code of the rest (it called the function in slot ${state.firstSlot}; node scripts/split-profile.mjs records the profile anew)`);
        }
      }
      ctx.errors = ctx.errors.filter((e) => !/_rest\.wasm|net::ERR_FAILED|Failed to load resource/.test(e));
    },
  },
  {
    // An embed lives in a docs page that talks to it: the sizing script asks for its height,
    // the host helper follows the page's theme and asks for the verdict. Its first view
    // runs on the first part of its bundle there too (scripts/split-profile.mjs records it so).
    name: 'bundles::an_embed_in_a_host_page_that_talks_to_it_runs_on_the_first_part',
    serviceWorkers: 'block',
    async run(ctx) {
      let origin = '';
      const host = await serveHtml(
        () => `<!doctype html><html lang="en"><head><title>host</title></head><body><h1>A chapter</h1>
<iframe class="lockstep-embed" src="${ctx.baseURL}#/embed?v=1&b=05-fencing.toml&id=first&origins=${encodeURIComponent(origin)}" title="A run"></iframe>
<script src="${ctx.baseURL}embed-size.js"></script><script src="${ctx.baseURL}lockstep-host.js"></script>
<script>Lockstep.followTheme(function () { return document.documentElement.classList.contains('dark') ? 'dark' : 'light'; });
Lockstep.embeds().forEach(function (e) { e.request({ type: 'lockstep:get-verdict' }).then(function (r) { window.answered = r; }); });
setTimeout(function () { document.documentElement.classList.add('dark'); }, 500);</script></body></html>`,
      );
      origin = host.origin;
      try {
        await ctx.page.route('**/*_rest.wasm', (route) => (route.request().resourceType() === 'fetch' ? route.abort() : route.continue()));
        await ctx.page.goto(host.url, { waitUntil: 'load' });
        const frame = await until(async () => ctx.page.frames().find((f) => f.url().includes('#/embed')), 'the frame');
        await frame.waitForSelector('#embed-headline', { timeout: 20000 });
        await until(() => ctx.page.evaluate(() => window.answered && window.answered.type), 'the verdict to be answered');
        await until(() => frame.evaluate(() => document.documentElement.dataset.theme === 'dark'), 'the embed to follow the page into the dark');
        await ctx.page.waitForLoadState('networkidle');
        const state = await frame.evaluate(() => ({ ...globalThis.__lockstepSplit, hits: undefined }));
        assertEqual(state.syncLoads, 0, `the embed in a host page called no code of the rest (it called the function in slot ${state.firstSlot}; node scripts/split-profile.mjs records the profile anew)`);
      } finally {
        await host.close();
      }
      ctx.errors = ctx.errors.filter((e) => !/_rest\.wasm|net::ERR_FAILED|Failed to load resource/.test(e));
    },
  },
  {
    // A click before the rest has arrived loads it at once and does what it should: here the
    // fetch that follows the view fails, so the first change the user makes needs the rest.
    name: 'bundles::a_control_used_before_the_rest_arrives_loads_it_and_works',
    serviceWorkers: 'block',
    async run(ctx) {
      // The same change on a page whose rest arrived as usual, for comparison.
      await ctx.open('#/sandbox');
      await ctx.pickScenario('05-fencing.toml');
      await splitState(ctx);
      let before = await ctx.snapshot();
      await ctx.page.selectOption('#fencing-accounts', 'any_source');
      await ctx.waitChange(before, 'the run to change', ['counts', 'editor']);
      const usual = await ctx.snapshot();

      // The fetch that follows the view fails; the load at once (a synchronous request) does not.
      let refused = 0;
      await ctx.page.route('**/app_rest.wasm', (route) => {
        if (route.request().resourceType() !== 'fetch') return route.continue();
        refused += 1;
        return route.abort();
      });
      await ctx.page.evaluate(() => localStorage.clear());
      await ctx.page.goto('about:blank');
      await ctx.open('#/sandbox');
      await until(async () => refused > 0, 'the rest was asked for');
      assertEqual(await ctx.page.evaluate(() => globalThis.__lockstepSplit.loaded), false, 'the rest has not arrived');
      await ctx.pickScenario('05-fencing.toml');
      before = await ctx.snapshot();
      await ctx.page.selectOption('#fencing-accounts', 'any_source');
      await ctx.waitChange(before, 'the run to change', ['counts', 'editor']);
      const state = await ctx.page.evaluate(() => ({ loaded: globalThis.__lockstepSplit.loaded, syncLoads: globalThis.__lockstepSplit.syncLoads }));
      assertEqual(JSON.stringify(state), '{"loaded":true,"syncLoads":1}', 'the rest was loaded at once, by the first call that needed it');
      const now = await ctx.snapshot();
      for (const key of Object.keys(usual)) assertEqual(now[key], usual[key], `${key}: the same run as with the rest loaded as usual`);
      ctx.errors = ctx.errors.filter((e) => !/app_rest\.wasm|net::ERR_FAILED|Failed to load resource/.test(e));
    },
  },
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
      assertEqual(JSON.stringify(fetched), '["app"]', 'no reader before the first edit');
      const text = await ctx.value('#editor');
      await ctx.setInputValue('#editor', text.replace(/^seed\s*=\s*\d+/m, 'seed = 4242'));
      await until(async () => (await ctx.value('#editor')).includes('seed = 4242'), 'the edit');
      // The edit is read in the reader's worker, loaded now, and then runs.
      await until(async () => (await ctx.attr('#editor', 'aria-busy')) === null, 'the edit was read');
      assertEqual(JSON.stringify(fetched), '["app","reader"]', 'the first edit fetched the reader');
      await ctx.frames(2);
      const before = await ctx.snapshot();
      const hash = await ctx.page.evaluate(() => location.hash);

      await ctx.unfold('share', '#share-link');
      assertEqual(JSON.stringify(fetched), '["app","reader","studio"]', 'unfolding the panel fetched the studio bundle');
      const after = await ctx.snapshot();
      for (const key of Object.keys(before)) {
        assertEqual(after[key], before[key], `${key} after the hand-over`);
      }
      assertEqual(await ctx.page.evaluate(() => location.hash), hash, 'the address');
      assertEqual(await ctx.page.evaluate(() => document.activeElement?.closest('details')?.id), 'share', 'the focus is on the unfolded panel');
      assert(!(await ctx.exists('#notice')), 'no notice: the hand-over is not a link being opened');
      // Once the studio's bundle has the page, the other panels unfold without another download.
      await ctx.unfold('lab', '#sweep-param');
      await ctx.unfold('explore', '#explore-run');
      assertEqual(JSON.stringify(fetched), '["app","reader","studio"]', 'no other download');
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
    name: 'bundles::a_custom_scenario_travels_as_json_and_a_toml_link_opens_in_the_studio_bundle',
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
      assertEqual(JSON.stringify(fetchedFull), '["app"]', "a JSON link opens in the sandbox's own bundle");
      assertEqual(await full.$('#notice'), null, 'the same run: no notice');
      assertEqual(strip(await full.textContent('#verdict-headline')), strip(headline), 'the same verdict in the full app');
      assert((await full.$eval('#editor', (e) => e.value)).includes('name = "Our own partition"'), 'the editor shows it as TOML');

      // The sandbox's own link carries the scenario as JSON too.
      const runLink = await ctx.value('#share-link');
      assert(/[?&]j=/.test(runLink) && !/[?&]c=/.test(runLink), runLink);
      // Addresses with the scenario as TOML (c=, the form earlier versions wrote) still open,
      // the run and the embed view alike: the studio's bundle, which reads TOML, draws them.
      const toml = await ctx.value('#editor');
      const packed = zlib.deflateRawSync(Buffer.from(toml), { level: 9 }).toString('base64url');
      const tomlQuery = `v=1&c=${packed}&d=${digest}`;
      for (const [view, selector] of [['run', '#verdict-headline'], ['embed', '#embed-headline']]) {
        const older = await ctx.context.newPage();
        const fetchedOlder = watchBundles(ctx, older);
        await older.goto(`${ctx.baseURL}#/${view}?${tomlQuery}`, { waitUntil: 'load' });
        await ready(older);
        await older.waitForSelector(selector);
        assertEqual(await older.$('#notice'), null, `a TOML ${view} link opens without a notice`);
        assertEqual(strip(await older.textContent(selector)), strip(headline), 'the same verdict');
        assertEqual(JSON.stringify(fetchedOlder), '["studio"]', `a TOML ${view} link is drawn by the studio bundle`);
        if (view === 'embed') assertEqual(await older.$('header.top'), null, 'as the embed view, without the page header');
        await older.close();
      }
    },
  },
  {
    name: 'bundles::a_lesson_downloads_the_lesson_bundle_and_the_other_views_their_own',
    async run(ctx) {
      const fetched = watchBundles(ctx);
      await ctx.open('#/lessons/two-orders/one-service');
      // The lesson view is ready before its lesson's file has arrived; the step follows it. The
      // step asks a prediction first; "Just show me" plays its run, verdict and all.
      await ctx.page.waitForSelector('#view-title[data-place="one-service"]', { timeout: 20000 });
      await ctx.showRun();
      await ctx.page.waitForSelector('#verdict-headline');
      assertEqual(JSON.stringify(fetched), '["course"]', 'a lesson step fetched only the lesson bundle');
      // The sandbox is the sandbox's bundle, and the facilitator's view the studio's.
      await ctx.page.click('#nav-sandbox');
      await until(async () => fetched.includes('app') && (await ctx.exists('#editor')), 'the sandbox after the lesson');
      await ctx.page.click('#nav-facilitator');
      await until(async () => fetched.includes('studio') && (await ctx.exists('#view-title')), 'the facilitator after the sandbox');
      assertEqual(JSON.stringify(fetched), '["course","app","studio"]', 'each view its own bundle');
    },
  },
  {
    name: 'bundles::a_reader_that_cannot_load_says_so_and_keeps_the_text',
    // A browser that has kept the site offline has the reader too; this is one that has not.
    serviceWorkers: 'block',
    async run(ctx) {
      // The reader's wasm cannot be fetched (offline, a blocked file): the edit is refused with
      // the reason, the last valid run stays, and nothing typed is lost.
      await ctx.page.route('**/reader_bg.wasm', (route) => route.abort());
      await ctx.open('#/sandbox');
      await ctx.pickScenario('05-fencing.toml');
      const headline = await ctx.text('#verdict-headline');
      const text = await ctx.value('#editor');
      const edited = text.replace(/^seed\s*=\s*\d+/m, 'seed = 777');
      await ctx.setInputValue('#editor', edited);
      await until(async () => (await ctx.text('#editor-errors')).includes('could not be read'), 'the reason');
      assertEqual(await ctx.attr('#editor', 'aria-busy'), null, 'the editor no longer waits');
      assertEqual(await ctx.text('#verdict-headline'), headline, 'the last valid run stays');
      assertEqual(await ctx.value('#editor'), edited, 'the text stays as typed');
      // Once the reader can load, a reload reads the saved text and runs it.
      await ctx.page.unroute('**/reader_bg.wasm');
      await ctx.reload();
      assertEqual(await ctx.value('#editor'), edited, 'the text was saved');
      await until(async () => (await ctx.attr('#editor', 'aria-busy')) === null, 'read after the reload');
      assertEqual(await ctx.text('#editor-errors'), '', 'no errors once read');
    },
  },
  {
    // A Yew developer types Trunk's own commands. Without the site's settings the bundles would
    // compile differently and every first view would load the rest of its code on the spot, so
    // the build stops before compiling anything and says how to run it.
    name: 'bundles::a_plain_trunk_build_or_serve_stops_and_says_how_to_build',
    async run() {
      const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-plain-trunk-'));
      try {
        const built = spawnSync('trunk', ['build', '--release', '--dist', dist], { cwd: ROOT, env: plainShell(), encoding: 'utf8', timeout: 120000 });
        const said = `${built.stdout}${built.stderr}`;
        assert(built.status !== 0, `trunk build stopped (status ${built.status}):\n${said}`);
        assert(said.includes(HOW), `it says how to build:\n${said}`);
        assert(!said.includes('Compiling'), 'nothing was compiled');
        assert(!fs.existsSync(path.join(dist, 'index.html')), 'no site was written');
        // `trunk serve` builds first, and says the same before it serves anything.
        const serve = spawn('trunk', ['serve', '--port', '0', '--dist', dist], { cwd: ROOT, env: plainShell() });
        let out = '';
        serve.stdout.on('data', (d) => (out += d));
        serve.stderr.on('data', (d) => (out += d));
        try {
          await until(() => out.includes(HOW), `trunk serve to say how to build (it said:\n${out})`, 60000);
          assert(!fs.existsSync(path.join(dist, 'index.html')), 'no site was served');
        } finally {
          serve.kill('SIGKILL');
        }
      } finally {
        fs.rmSync(dist, { recursive: true, force: true });
      }
    },
  },
];
