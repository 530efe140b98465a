// Share and embed: a permalink reproduces the run the command line computes; links from
// another version or broken links say so and keep the user's work; the embed view answers its
// host's API from a listed origin only, tells the host its height, and is clean for axe; the
// exported SVG and PNG decode and import back to the same run; a broken import keeps the
// scenario shown.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { LOCKSTEP, SCENARIO_DIR, cliHeadline, tempScenario } from '../lib/cli.mjs';
import { serveHtml } from '../lib/server.mjs';
import { axe } from './a11y.mjs';

/** `lockstep export FILE --format json`, parsed: the run's digest and counts. */
function cliTrace(file, seed) {
  const args = ['export', file, '--format', 'json'];
  if (seed !== undefined) args.push('--seed', String(seed));
  const r = spawnSync(LOCKSTEP, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`lockstep ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The link the share panel offers. */
async function shareLink(ctx) {
  return ctx.page.$eval('#share-link', (el) => el.value);
}

/** The digest a link carries. */
const digestOf = (link) => new URL(link.replace('#/run?', '?')).searchParams.get('d');

async function headline(ctx) {
  return (await ctx.text('#verdict-headline')).replace(/^[✓✗]\s*/, '');
}

/** Waits for a download started by `click` and returns its bytes. */
async function downloadOf(ctx, selector) {
  const [download] = await Promise.all([ctx.page.waitForEvent('download'), ctx.page.click(selector)]);
  const file = await download.path();
  return { name: download.suggestedFilename(), bytes: fs.readFileSync(file) };
}

async function openShare(ctx) {
  await ctx.unfold('share', '#share-link');
}

export const tests = [
  {
    name: 'share::a_permalink_reproduces_the_run_of_the_command_line',
    async run(ctx) {
      await ctx.open();
      await ctx.pickScenario('05-fencing.toml');
      await ctx.page.click('#new-seed');
      await ctx.settle();
      const seed = Number(await ctx.value('#seed'));
      await openShare(ctx);
      const link = await shareLink(ctx);
      assert(link.length < 200, `a built-in's link is short: ${link}`);
      const file = path.join(SCENARIO_DIR, '05-fencing.toml');
      const trace = cliTrace(file, seed);
      assertEqual(digestOf(link), trace.digest, 'the link carries the digest of the CLI run');

      // A fresh page (no storage) opens the same run.
      const page = await ctx.context.newPage();
      await page.goto(link, { waitUntil: 'load' });
      await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
      await page.click('#share > summary');
      await page.waitForFunction((d) => document.querySelector('#share-link')?.value.includes(`d=${d}`), trace.digest);
      const shown = (await page.textContent('#verdict-headline')).replace(/^[✓✗]\s*/, '').trim();
      assertEqual(shown, cliHeadline(file, seed).trim(), 'the same verdict');
      const events = await page.textContent('#events summary').catch(() => '');
      if (events) assert(events.includes(`${trace.event_count} events`), `the same number of events: ${events}`);
      assertEqual(await page.$('#notice'), null, 'no notice for a link of this version');
      await page.close();
    },
  },
  {
    name: 'share::a_link_whose_run_differs_says_so_quietly',
    async run(ctx) {
      await ctx.open('#/run?v=1&b=05-fencing.toml&d=0123456789abcdef');
      await until(async () => (await ctx.exists('#link-note')), 'a note');
      const note = await ctx.text('#link-note');
      assert(/0123456789abcdef/.test(note) && /the link was edited, or/.test(note), note);
      assert(!(await ctx.exists('#notice')), 'no banner: the run still shows the scenario');
      await ctx.open('#/run?v=7&b=05-fencing.toml&d=0123456789abcdef');
      await until(async () => (await ctx.text('#link-note')).includes('link format 7'), 'the format named');
      // Written by hand: a built-in and an edit, no version and no digest, and no word said.
      await ctx.open('#/run?b=05-fencing.toml&e=seed%203');
      await until(async () => (await ctx.value('#seed')) === '3', 'the edit applied');
      assert(!(await ctx.exists('#link-note')) && !(await ctx.exists('#notice')), 'nothing to note');
    },
  },
  {
    name: 'share::a_broken_link_shows_why_and_keeps_what_the_user_typed',
    async run(ctx) {
      await ctx.open('#/sandbox');
      await ctx.pickScenario('06-partition.toml');
      const before = await ctx.value('#editor');
      const typed = before.replace('duration_ms = ', 'duration_ms = 1');
      await ctx.setInputValue('#editor', typed);
      await ctx.settle();
      for (const bad of ['#/run?v=1&b=nope.toml&d=00', '#/run?v=1&c=%%%&d=00', '#/run?garbage']) {
        await ctx.page.evaluate((h) => (location.hash = h), bad);
        await until(async () => (await ctx.exists('#notice')) && (await ctx.text('#notice')).includes('cannot be opened'), `${bad}: its error`);
        await ctx.page.click('#notice button');
      }
      // A good link shows its run but does not replace the saved work.
      await ctx.page.evaluate(() => (location.hash = '#/run?v=1&b=01-two-services.toml'));
      await until(async () => (await ctx.value('#scenario')) === '01-two-services.toml', 'the linked run');
      await ctx.page.evaluate(() => (location.hash = '#/sandbox'));
      await ctx.reload();
      assertEqual(await ctx.value('#editor'), typed, 'the text the user typed is still saved');
    },
  },
  {
    name: 'share::the_embed_answers_its_host_and_ignores_other_origins',
    async run(ctx) {
      const trace = cliTrace(path.join(SCENARIO_DIR, '05-fencing.toml'));
      const app = ctx.baseURL;
      const page = (origin) => `<!doctype html><html lang="en"><head><title>host</title></head><body>
<iframe id="f" title="Lockstep" sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox" style="width:900px;height:300px;border:0"
 src="${app}#/embed?v=1&b=05-fencing.toml&d=${trace.digest}&controls=fencing%20accounts&origins=${encodeURIComponent(origin)}"></iframe>
<script>window.got=[];addEventListener('message',function(e){if(e.source===document.getElementById('f').contentWindow){window.got.push(e.data);}});</script>
</body></html>`;
      // Two host pages on two more ports (two more origins); both embed the same address,
      // which lists only the first. A host page's origin is known once its server listens, so
      // each page is made when it is asked for.
      let allowedOrigin = '';
      const allowed = await serveHtml(() => page(allowedOrigin));
      allowedOrigin = allowed.origin;
      const third = await serveHtml(() => page(allowedOrigin));
      const thirdOrigin = third.origin;
      try {
        const p = ctx.page;
        await p.goto(allowedOrigin + '/', { waitUntil: 'load' });
        const got = (type, extra = () => true) =>
          p.evaluate(({ type }) => window.got.filter((m) => m && m.type === type), { type }).then((ms) => ms.filter(extra));
        await until(async () => (await got('lockstep:ready')).length > 0, 'the embed says it is ready', 20000);
        const ready = (await got('lockstep:ready'))[0];
        assertEqual(ready.verdict.digest, trace.digest, 'the embedded run is the CLI run');
        await until(async () => (await got('lockstep:height')).some((m) => m.px > 100), 'the embed tells its height');
        await p.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'lockstep:get-verdict', id: 5 }, '*'));
        await until(async () => (await got('lockstep:verdict', (m) => m.id === 5)).length === 1, 'an answer to get-verdict');
        await p.evaluate(() =>
          document.getElementById('f').contentWindow.postMessage({ type: 'lockstep:set-toggle', edit: 'fencing accounts one_source all_accesses' }, '*'),
        );
        await until(async () => (await got('lockstep:verdict-changed')).length > 0, 'the verdict changes after a toggle');
        const changed = (await got('lockstep:verdict-changed')).at(-1);
        assertEqual(changed.verdict.lost_updates, 0, 'fencing from one source keeps every update');
        // A toggle of a control the embedder did not list is ignored.
        const before = (await got('lockstep:verdict-changed')).length;
        await p.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'lockstep:set-toggle', edit: 'seed 99' }, '*'));
        // A question asked after it is answered after it: the embed handles messages in order,
        // and a toggle it applied would redraw and say verdict-changed before the next message
        // is read (the page's updates run as microtasks of the message's task). So once the
        // answer to id 7 is here, a verdict-changed for the seed would be here too.
        await p.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'lockstep:get-verdict', id: 7 }, '*'));
        await until(async () => (await got('lockstep:verdict', (m) => m.id === 7)).length === 1, 'an answer to the get-verdict sent after the toggle');
        assertEqual((await got('lockstep:verdict-changed')).length, before, 'an unlisted control changes nothing');
        assertEqual((await got('lockstep:verdict', (m) => m.id === 7))[0].verdict.digest, changed.verdict.digest, 'the verdict after an unlisted control is the one before it');

        // The same embed in a page of a third origin: nothing it says is answered.
        await p.goto(thirdOrigin + '/', { waitUntil: 'load' });
        const frame = await until(async () => p.frames().find((f) => f.url().includes('#/embed')), 'the frame');
        await frame.waitForFunction(() => document.documentElement.dataset.embedReady === 'true', null, { timeout: 20000 });
        await p.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'lockstep:get-verdict', id: 6 }, '*'));
        // Any host may ask for the height, and is answered: asked after the get-verdict, its
        // answer comes after anything the embed said to that get-verdict (messages are handled
        // and sent in order), so once it is here a verdict sent to this origin would be too.
        await p.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'lockstep:get-height', id: 8 }, '*'));
        await until(async () => (await got('lockstep:height', (m) => m.id === 8)).length === 1, 'the height asked after the get-verdict');
        // Only the height, which is no secret, reaches any host; nothing else does.
        const heard = await p.evaluate(() => window.got.map((m) => m && m.type));
        assertEqual(JSON.stringify(heard.filter((t) => t !== 'lockstep:height')), '[]', 'the third origin hears nothing but the height');
      } finally {
        await allowed.close();
        await third.close();
      }
    },
  },
  {
    name: 'share::the_embed_view_is_readable_at_once_and_clean_for_axe',
    viewport: { width: 900, height: 700 },
    async run(ctx) {
      const trace = cliTrace(path.join(SCENARIO_DIR, '01-two-services.toml'));
      const started = Date.now();
      await ctx.page.goto(`${ctx.baseURL}#/embed?v=1&b=01-two-services.toml&d=${trace.digest}&controls=fencing%20orders`, { waitUntil: 'load' });
      await ctx.page.waitForFunction(() => document.documentElement.dataset.embedReady === 'true');
      ctx.note(`embed ready in ${Date.now() - started} ms`);
      const box = (sel) => ctx.page.$eval(sel, (el) => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight && r.width > 0; });
      assert(await box('#embed-headline'), 'the headline is in view');
      assert(await box('#timeline'), 'the timeline is in view');
      assert((await ctx.text('#embed-headline')).includes('Exclusion broken'), 'the verdict is said');
      assert(await ctx.exists('#fencing-orders'), 'the listed control is there');
      assert(!(await ctx.exists('#new-seed')), 'an unlisted control is not');
      const href = await ctx.attr('#open-full', 'href');
      assert(href.includes('#/run?') && href.includes(`d=${trace.digest}`), href);
      const stored = await ctx.page.evaluate(() => localStorage.length);
      assertEqual(stored, 0, 'the embed keeps nothing in storage');
      await axe(ctx, 'embed view');
      await ctx.screenshot('embed');
    },
  },
  {
    name: 'share::exported_pictures_decode_and_import_to_the_same_run',
    async run(ctx) {
      await ctx.open('#/sandbox');
      await ctx.pickScenario('06-partition.toml');
      await openShare(ctx);
      const digest = digestOf(await shareLink(ctx));
      const svg = await downloadOf(ctx, '#export-svg');
      assert(svg.name.endsWith('.svg'), svg.name);
      const parsed = await ctx.page.evaluate((text) => {
        const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
        return doc.querySelector('parsererror') ? 'error' : doc.documentElement.nodeName;
      }, svg.bytes.toString('utf8'));
      assertEqual(parsed, 'svg', 'the SVG parses');
      const png = await downloadOf(ctx, '#export-png');
      const size = await ctx.page.evaluate(async (b64) => {
        const img = new Image();
        img.src = `data:image/png;base64,${b64}`;
        await img.decode();
        return [img.naturalWidth, img.naturalHeight];
      }, png.bytes.toString('base64'));
      assert(size[0] > 1000 && size[1] > 200, `the PNG decodes: ${size}`);
      const json = await downloadOf(ctx, '#export-json');
      assertEqual(JSON.parse(json.bytes.toString('utf8')).digest, digest, 'the trace carries the digest');
      const md = await downloadOf(ctx, '#export-md');
      assert(md.bytes.toString('utf8').includes(digest), 'the Markdown names the digest');

      for (const [what, file] of [['svg', svg], ['png', png]]) {
        await ctx.pickScenario('01-two-services.toml');
        await openShare(ctx);
        const tmp = tempScenario('');
        const named = tmp.replace(/\.toml$/, `.${what}`);
        fs.writeFileSync(named, file.bytes);
        await ctx.page.setInputFiles('#import-file', named);
        await until(async () => (await ctx.text('#import-status')).startsWith('Imported'), `${what}: imported`);
        await until(async () => digestOf(await shareLink(ctx)) === digest, `${what}: the same run again`);
      }
    },
  },
  {
    name: 'share::a_broken_import_shows_its_located_error_and_keeps_the_scenario',
    async run(ctx) {
      await ctx.open('#/sandbox');
      await ctx.pickScenario('05-fencing.toml');
      await openShare(ctx);
      const before = await shareLink(ctx);
      const bad = tempScenario('name = "broken"\nduration_ms = [\n');
      await ctx.page.setInputFiles('#import-file', bad);
      await until(async () => (await ctx.text('#import-status')).includes('was not imported'), 'the error');
      const status = await ctx.text('#import-status');
      assert(/line 2/.test(status), `the error is located: ${status}`);
      assertEqual(await shareLink(ctx), before, 'the scenario is unchanged');
    },
  },
];
