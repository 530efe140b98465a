// Embeds where docs live: the site served by a plain static server that sends no special
// header (tests/e2e/lib/server.mjs), and host pages on other origins. The code blocks of
// docs/embedding.md run as written, with only the example addresses replaced by the test's.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { ROOT } from '../lib/cli.mjs';
import { serveDir, serveHtml } from '../lib/server.mjs';
import { block, localise } from '../lib/docblocks.mjs';
import { watchRequests } from '../lib/quiet.mjs';
import { build } from 'esbuild';

/** Serves a host page made from `body(hostOrigin)` on an origin of its own. */
async function hostPage(body) {
  let origin = '';
  const server = await serveHtml(() => `<!doctype html><html lang="en"><head><title>host</title></head><body>${body(origin)}</body></html>`);
  origin = server.origin;
  return server;
}

/** Whether a frame's height is one an embed reported: set, and not the snippet's first 520 px. */
const sizedByEmbed = (height) => /^\d+px$/.test(height) && height !== '520px';

/** A scenario's text packed as links carry it: raw deflate, then base64url. */
const pack = (bytes) => zlib.deflateRawSync(Buffer.from(bytes), { level: 9 }).toString('base64url');

/** The scenario a link's `j=` carries, as text. */
const unpackJ = (href) => {
  const j = new URL(href.replace('#/', '/').replace('/run?', '/run/?')).searchParams.get('j');
  assert(j, `a j= field in ${href}`);
  return zlib.inflateRawSync(Buffer.from(j, 'base64url')).toString('utf8');
};

/** The fencing scenario, renamed, as a user's own JSON. */
const OWN_FENCING = JSON.stringify({
  name: 'Our own fencing',
  description: 'A paused client writes after its lease expired.',
  duration_ms: 3000,
  seed: 1,
  regions: ['east'],
  services: [{ name: 'locks', replicas: ['east', 'east', 'east'], protects: ['accounts'], lease_ms: 500 }],
  resources: [{ name: 'accounts', rows: ['balance'], fencing: 'off' }],
  clients: [
    { name: 'slow', region: 'east', resource: 'accounts', protocol: { kind: 'single', service: 'locks' }, period_ms: 100, work_ms: 100, max_operations: 1 },
    { name: 'fast', region: 'east', resource: 'accounts', protocol: { kind: 'single', service: 'locks' }, period_ms: 100, work_ms: 400, start_ms: 550, max_operations: 1 },
  ],
  pauses: [{ client: 'slow-1', start_ms: 50, duration_ms: 750 }],
});

export const tests = [
  {
    // The embed has the browser inflate and deflate a link's scenario (Compression Streams);
    // the sandbox uses its own compressor. Both must read the same links, refuse the same
    // broken ones in the same words, and write links the other opens.
    name: 'embed_hosts::a_packed_scenario_is_read_and_written_by_the_browser_as_the_sandbox_does',
    async run(ctx) {
      await ctx.open(`#/embed?v=1&j=${pack(OWN_FENCING)}&controls=fencing%20accounts`);
      await ctx.need('#embed-headline');
      assertEqual((await ctx.text('.embed-title')).trim(), 'Our own fencing', 'the packed scenario opened');
      // The link appears once the browser has packed the scenario as the full app writes it.
      const first = await until(async () => ctx.attr('#open-full', 'href'), 'the open-full link');
      assertEqual(JSON.parse(unpackJ(first)).name, 'Our own fencing', 'the link carries it back');

      // A toggle changes the scenario: the link follows, packed by the browser, and the full
      // app (its own inflater) opens the same run.
      await ctx.page.selectOption('#fencing-accounts', 'one_source');
      const href = await until(async () => {
        const h = await ctx.attr('#open-full', 'href');
        return h && JSON.parse(unpackJ(h)).resources[0].fencing === 'one_source' ? h : null;
      }, 'the link to carry the toggled scenario');
      const headline = (await ctx.text('#embed-headline')).replace(/^[✓✗]\s*/, '').trim();
      const full = await ctx.context.newPage();
      await full.goto(href, { waitUntil: 'load' });
      await full.waitForSelector('#verdict-headline');
      assertEqual(await full.$('#notice'), null, 'the same run: no notice');
      assertEqual((await full.textContent('#verdict-headline')).replace(/^[✓✗]\s*/, '').trim(), headline, 'the same verdict');
      await full.close();

      // A host that changes the frame's address gets the new address's run, nothing of the last.
      await ctx.page.evaluate(() => { location.hash = '#/embed?v=1&b=05-fencing.toml'; });
      await until(async () => (await ctx.text('.embed-title')).trim() === 'Fencing tokens at the resource', 'the new address\'s run');
      assert(!(await ctx.exists('#fencing-accounts')), 'no control the new address does not list');
      assert(!(await ctx.attr('#open-full', 'href')).includes('j='), 'the link is the shipped scenario\'s');

      // Broken packings: each refused, in the sandbox's words.
      const cases = [
        ['not deflate data', 'AAAA'],
        ['not base64url', 'a*b'],
        ['not UTF-8 text', pack([0xff, 0xfe, 0xfd])],
        [`expands past ${1 << 20} bytes`, pack(Buffer.alloc((1 << 20) + 1, 'a'))],
        // A whole scenario's stream with bytes after its end: refused by every reader alike.
        ['not deflate data', Buffer.concat([zlib.deflateRawSync(Buffer.from('name = "x"'), { level: 9 }), Buffer.from([1, 2, 3])]).toString('base64url')],
      ];
      for (const [words, packed] of cases) {
        const page = await ctx.context.newPage();
        await page.goto(`${ctx.baseURL}#/embed?v=1&j=${packed}`, { waitUntil: 'load' });
        await page.waitForSelector('#embed-error', { timeout: 20000 });
        const said = await page.textContent('#embed-error');
        assert(said.includes(words), `the embed says "${words}": ${said}`);
        await page.goto(`${ctx.baseURL}#/run?v=1&j=${packed}`, { waitUntil: 'load' });
        await page.waitForSelector('#notice', { timeout: 20000 });
        const sandbox = await page.textContent('#notice');
        assert(sandbox.includes(words), `the sandbox says "${words}": ${sandbox}`);
        await page.close();
      }
    },
  },
  {
    name: 'embed_hosts::the_documented_snippet_and_host_api_work_verbatim_from_a_plain_server',
    async run(ctx) {
      const snippet = block('html', '## Embedding');
      const api = block('js', '### The host API');
      const host = await hostPage((origin) => `${localise(snippet, ctx.baseURL, origin)}\n<script>${localise(api, ctx.baseURL, origin)}</script>`);
      const logged = [];
      ctx.page.on('console', (m) => {
        if (m.type() === 'log') logged.push(m.text());
      });
      try {
        await ctx.page.goto(host.url, { waitUntil: 'load' });
        const frame = await until(async () => ctx.page.frames().find((f) => f.url().includes('#/embed')), 'the frame');
        await frame.waitForSelector('#embed-headline', { timeout: 20000 });
        // The snippet's own script sized the frame from the embed's height message.
        await until(
          async () => sizedByEmbed(await ctx.page.$eval('iframe', (f) => f.style.height)),
          'the frame to be sized by the embed',
        );
        // The host API example: on ready it turns fencing on every access on, and logs the new
        // headline when the verdict changes.
        await until(async () => logged.some((l) => l.startsWith('Exclusion')), 'the example to log the changed verdict', 20000);
        assert(
          (await frame.$eval('#fencing-accounts', (s) => s.value)) === 'one_source',
          'the toggle the host sent is shown in the embed',
        );
        ctx.note(`logged: ${logged.join(' | ')}`);
      } finally {
        await host.close();
      }
    },
  },
  {
    name: 'embed_hosts::a_broken_address_shows_its_error_and_tells_the_host',
    async run(ctx) {
      const snippet = block('html', '## Embedding');
      // A hand-made mistake: an edit the scenario has no control for.
      const broken = (origin) =>
        localise(snippet, ctx.baseURL, origin).replace('controls=fencing%20accounts', 'controls=fencing%20nowhere') +
        `<script>window.got=[];addEventListener('message',function(e){if(e.source===document.querySelector('iframe').contentWindow){window.got.push(e.data);}});</script>`;
      const host = await hostPage(broken);
      try {
        await ctx.page.goto(host.url, { waitUntil: 'load' });
        const frame = await until(async () => ctx.page.frames().find((f) => f.url().includes('#/embed')), 'the frame');
        await frame.waitForSelector('#embed-error', { timeout: 20000 });
        const said = await frame.textContent('#embed-error');
        assert(said.includes('cannot be shown') && said.includes('nowhere'), `the frame says why: ${said}`);
        assertEqual(await frame.$('#timeline'), null, 'no other run is shown');
        const got = () => ctx.page.evaluate(() => window.got);
        await until(async () => (await got()).some((m) => m && m.type === 'lockstep:error'), 'the host to hear of the error');
        const error = (await got()).find((m) => m.type === 'lockstep:error');
        assert(error.error.includes('nowhere'), `the reason: ${error.error}`);
      } finally {
        await host.close();
      }
    },
  },
  {
    // A scenario the site does not ship (a name mistyped in a docs page) shows no run at all:
    // not the default run under a note, and never a `ready`.
    name: 'embed_hosts::a_wrong_scenario_shows_no_run_and_tells_the_host',
    async run(ctx) {
      for (const query of ['b=08-staggered.toml&id=fig-8', 'v=1&b=nothing-here.toml&origins=ORIGIN']) {
        const host = await hostPage((origin) =>
          `<iframe src="${ctx.baseURL}#/embed?${query.replace('ORIGIN', encodeURIComponent(origin))}" title="Lockstep"></iframe>` +
          `<script>window.got=[];addEventListener('message',function(e){if(e.source===document.querySelector('iframe').contentWindow){window.got.push(e.data);}});</script>`);
        try {
          await ctx.page.goto(host.url, { waitUntil: 'load' });
          const frame = await until(async () => ctx.page.frames().find((f) => f.url().includes('#/embed')), 'the frame');
          await frame.waitForSelector('#embed-error', { timeout: 20000 });
          const said = await frame.textContent('#embed-error');
          assert(said.includes('cannot be shown') && said.includes('no built-in scenario'), `the frame says why: ${said}`);
          assertEqual(await frame.$('#timeline'), null, `${query}: no run is shown`);
          assertEqual(await frame.$('#embed-headline'), null, `${query}: no verdict is shown`);
          const course = await frame.getAttribute('#open-full', 'href');
          assert(course.endsWith('#/lessons'), `a link to the course: ${course}`);
          const got = () => ctx.page.evaluate(() => window.got);
          await until(async () => (await got()).some((m) => m && m.type === 'lockstep:error'), 'the host to hear of the error');
          const error = (await got()).find((m) => m.type === 'lockstep:error');
          assert(error.error.includes('no built-in scenario'), `the reason: ${error.error}`);
          assertEqual(error.protocol, 1, 'the error is stamped with the protocol');
          if (query.includes('id=')) assertEqual(error.embed, 'fig-8', 'the error names its embed');
          // Any host may ask for the height and is answered, in order after everything the
          // embed said before: a ready sent before the error or after it is here by the time the
          // answer to this question is.
          await ctx.page.evaluate(() => document.querySelector('iframe').contentWindow.postMessage({ type: 'lockstep:get-height', id: 9 }, '*'));
          await until(async () => (await got()).some((m) => m && m.type === 'lockstep:height' && m.id === 9), 'the height asked after the error');
          assert(!(await got()).some((m) => m.type === 'lockstep:ready'), `${query}: never ready`);
        } finally {
          await host.close();
        }
      }
    },
  },
  {
    // A host whose sizing script arrives 3 s late (a docs page hydrating on a slow line): the
    // embed's own height messages went out before anyone listened, and the script's question
    // still sizes the frame to the content.
    name: 'embed_hosts::a_host_script_delayed_three_seconds_still_sizes_the_frame',
    async run(ctx) {
      const snippet = block('html', '## Embedding').replace(/&amp;origins=[^"]*/, '');
      const [frameHtml] = snippet.split('\n<script');
      const script = `${ctx.baseURL}embed-size.js`;
      const host = await hostPage((origin) =>
        localise(frameHtml, ctx.baseURL, origin) +
        // 3 s after the frame's document has loaded: long after the embed sent its heights.
        `<script>document.querySelector('iframe').addEventListener('load',function(){setTimeout(function(){window.before=document.querySelector('iframe').style.height;var s=document.createElement('script');s.src=${JSON.stringify(script)};document.body.appendChild(s);},3000);});</script>`);
      try {
        await ctx.page.goto(host.url, { waitUntil: 'load' });
        const frame = await until(async () => ctx.page.frames().find((f) => f.url().includes('#/embed')), 'the frame');
        await frame.waitForSelector('#embed-headline', { timeout: 20000 });
        await until(async () => sizedByEmbed(await ctx.page.$eval('iframe', (f) => f.style.height)), 'the late script to size the frame', 15000);
        assertEqual(await ctx.page.evaluate(() => window.before), '', 'nothing sized the frame before the script came');
        const content = await frame.evaluate(() => document.getElementById('embed').scrollHeight);
        const height = await ctx.page.$eval('iframe', (f) => f.getBoundingClientRect().height);
        assert(Math.abs(height - content) <= 2, `the frame (${height}px) fits the content (${content}px)`);
        assert(!(await frame.evaluate(() => document.scrollingElement.scrollHeight > innerHeight + 1)), 'no scroll inside the frame');
      } finally {
        await host.close();
      }
    },
  },
  {
    // A docs portal with a strict policy: no inline style, scripts from itself only, frames
    // from the site. The snippet needs nothing the policy refuses: the frame is full width,
    // borderless and sized by the embed.
    name: 'embed_hosts::a_strict_csp_host_gets_a_full_width_sized_frame',
    async run(ctx) {
      const snippet = block('html', '## Embedding').replace(/&amp;origins=[^"]*/, '');
      const sizing = fs.readFileSync(path.join(ROOT, 'static', 'embed-size.js'), 'utf8');
      const appOrigin = new URL(ctx.baseURL).origin;
      let origin = '';
      const host = await serveHtml(
        () => `<!doctype html><html lang="en"><head><title>strict docs</title></head><body><main>${localise(snippet, ctx.baseURL, origin).replace(`${ctx.baseURL}embed-size.js`, '/embed-size.js')}</main></body></html>`,
        {
          headers: { 'content-security-policy': `default-src 'self'; frame-src ${appOrigin}` },
          files: { '/embed-size.js': ['text/javascript; charset=utf-8', sizing] },
        },
      );
      origin = host.origin;
      const refused = [];
      ctx.page.on('console', (m) => {
        if (/Content.Security.Policy/i.test(m.text())) refused.push(m.text());
      });
      try {
        await ctx.page.goto(host.url, { waitUntil: 'load' });
        const frame = await until(async () => ctx.page.frames().find((f) => f.url().includes('#/embed')), 'the frame');
        await frame.waitForSelector('#embed-headline', { timeout: 20000 });
        await until(async () => sizedByEmbed(await ctx.page.$eval('iframe', (f) => f.style.height)), 'the frame sized under the policy');
        const box = await ctx.page.$eval('iframe', (f) => {
          const s = getComputedStyle(f);
          return { width: f.getBoundingClientRect().width, parent: f.parentElement.getBoundingClientRect().width, border: s.borderTopWidth };
        });
        assertEqual(box.width, box.parent, 'the frame is full width');
        assertEqual(box.border, '0px', 'the frame has no border');
        assertEqual(refused.join(' | '), '', 'the policy refused nothing');
      } finally {
        await host.close();
      }
    },
  },
  {
    name: 'embed_hosts::an_embed_that_cannot_load_says_so_with_a_link',
    async run(ctx) {
      // The wasm is refused, as a strict proxy or a broken host might.
      await ctx.page.route('**/embed_bg.wasm', (r) => r.abort());
      // The loader's last word when it gives up is a console warning with the cause (index.html,
      // `fail`); the browser's own error about the refused request comes before it.
      const warned = ctx.page.waitForEvent('console', { predicate: (m) => m.type() === 'warning', timeout: 20000 });
      // (Awaited below; a test that fails before then must not leave it rejecting unheard.)
      warned.catch(() => {});
      await ctx.page.goto(`${ctx.baseURL}#/embed?v=1&b=05-fencing.toml&controls=fencing%20accounts`, { waitUntil: 'load' });
      await until(async () => (await ctx.attr('#boot', 'class')).includes('failed'), 'the loader to give up');
      const text = await ctx.text('#boot');
      assert(text.startsWith('The simulator could not load here'), `the sentence: ${text}`);
      const href = await ctx.attr('#boot-link', 'href');
      assert(href.includes('#/run?v=1&b=05-fencing.toml') && !href.includes('controls='), `the link to the full app: ${href}`);
      // The refused request is the cause; nothing else went wrong. Once the loader has said
      // its last word, the failure has run its course: an error it caused is in ctx.errors.
      await warned;
      ctx.errors.splice(0, ctx.errors.length, ...ctx.errors.filter((e) => !/embed_bg\.wasm|Failed to fetch|net::ERR_FAILED|WebAssembly/.test(e)));
    },
  },
  {
    name: 'embed_hosts::zero_configuration_height_theme_and_playhead',
    async run(ctx) {
      // No origins listed: the frame still sizes itself with the documented script.
      const snippet = block('html', '## Embedding').replace(/&amp;origins=[^"]*/, '&amp;t=500000&amp;theme=dark&amp;caption=Fencing%2C%20live');
      const host = await hostPage((origin) => localise(snippet, ctx.baseURL, origin));
      try {
        await ctx.page.goto(host.url, { waitUntil: 'load' });
        const frame = await until(async () => ctx.page.frames().find((f) => f.url().includes('#/embed')), 'the frame');
        await frame.waitForSelector('#embed-headline', { timeout: 20000 });
        await until(async () => sizedByEmbed(await ctx.page.$eval('iframe', (f) => f.style.height)), 'the frame sized without any origin listed');
        // theme=dark is dark, whatever the reader's setting (the test browser's is light).
        const bg = await frame.evaluate(() => getComputedStyle(document.body).backgroundColor);
        const [r, g, b] = bg.match(/\d+/g).map(Number);
        assert(r + g + b < 200, `a dark background: ${bg}`);
        assertEqual((await frame.textContent('#embed-caption')).trim(), 'Fencing, live', 'the caption');
        // t= is honoured: the full app opens at the same moment.
        const href = await frame.getAttribute('#open-full', 'href');
        assert(href.includes('t=500000'), `the playhead kept: ${href}`);
      } finally {
        await host.close();
      }
    },
  },
  {
    name: 'embed_hosts::the_host_api_talks_back',
    async run(ctx) {
      const snippet = block('html', '## Embedding');
      const page = (origin) =>
        localise(snippet, ctx.baseURL, origin).replace('&amp;controls=', '&amp;id=fig-2&amp;controls=') +
        `<script>window.got=[];addEventListener('message',function(e){if(e.source===document.querySelector('iframe').contentWindow){window.got.push(e.data);}});</script>`;
      const host = await hostPage(page);
      try {
        const p = ctx.page;
        await p.goto(host.url, { waitUntil: 'load' });
        const got = (type) => p.evaluate((t) => window.got.filter((m) => m && m.type === t), type);
        const appOrigin = new URL(ctx.baseURL).origin;
        const send = (m) => p.evaluate(([m, o]) => document.querySelector('iframe').contentWindow.postMessage(m, o), [m, appOrigin]);
        await until(async () => (await got('lockstep:ready')).length > 0, 'ready', 20000);
        const ready = (await got('lockstep:ready'))[0];
        assertEqual(ready.protocol, 1, 'the protocol version');
        assertEqual(ready.embed, 'fig-2', 'the embed id');
        // A control the address does not list is refused, with the reason.
        await send({ type: 'lockstep:set-toggle', edit: 'seed 99' });
        await until(async () => (await got('lockstep:error')).length > 0, 'an error reply');
        assert((await got('lockstep:error'))[0].error.includes('does not offer'), 'the reason');
        // State, link and play state.
        await send({ type: 'lockstep:set-toggle', edit: 'fencing accounts one_source all_accesses', protocol: 1 });
        await send({ type: 'lockstep:get-state', id: 1 });
        await until(async () => (await got('lockstep:state')).some((m) => m.id === 1 && m.edits.length === 1), 'the state');
        await send({ type: 'lockstep:get-link', id: 2 });
        await until(async () => (await got('lockstep:link')).some((m) => m.id === 2), 'the link');
        const url = (await got('lockstep:link')).find((m) => m.id === 2).url;
        assert(url.includes('#/run?') && url.includes('fencing%20accounts%20one_source%20all_accesses'), url);
        await send({ type: 'lockstep:play' });
        await until(async () => (await got('lockstep:play-state')).some((m) => m.playing), 'playing');
        await send({ type: 'lockstep:pause' });
        await until(async () => (await got('lockstep:play-state')).some((m) => !m.playing), 'paused');
      } finally {
        await host.close();
      }
    },
  },
  {
    // A host that switches its theme (mdBook's theme menu, Docusaurus' colour mode) switches a
    // live embed with it, without a reload; auto follows the reader's setting as it changes.
    name: 'embed_hosts::set_theme_switches_a_live_embed_and_requests_echo_their_ids',
    async run(ctx) {
      const snippet = block('html', '## Embedding');
      const page = (origin) =>
        localise(snippet, ctx.baseURL, origin) +
        `<script>window.got=[];addEventListener('message',function(e){if(e.source===document.querySelector('iframe').contentWindow){window.got.push(e.data);}});</script>`;
      const host = await hostPage(page);
      try {
        const p = ctx.page;
        await p.emulateMedia({ colorScheme: 'light' });
        await p.goto(host.url, { waitUntil: 'load' });
        const got = (type) => p.evaluate((t) => window.got.filter((m) => m && m.type === t), type);
        const appOrigin = new URL(ctx.baseURL).origin;
        const send = (m) => p.evaluate(([m, o]) => document.querySelector('iframe').contentWindow.postMessage(m, o), [m, appOrigin]);
        await until(async () => (await got('lockstep:ready')).length > 0, 'ready', 20000);
        const frame = p.frames().find((f) => f.url().includes('#/embed'));
        const dark = async () => {
          const [r, g, b] = (await frame.evaluate(() => getComputedStyle(document.body).backgroundColor)).match(/\d+/g).map(Number);
          return r + g + b < 200;
        };
        const pixel = () => frame.evaluate(() => {
          const c = document.querySelector('#timeline canvas') || document.querySelector('canvas');
          return c ? c.toDataURL().length : 0;
        });
        assert(!(await dark()), 'light at first, as the reader\'s setting is');
        const before = await pixel();
        await send({ type: 'lockstep:set-theme', theme: 'dark', id: 11 });
        await until(async () => (await got('lockstep:theme')).some((m) => m.id === 11 && m.theme === 'dark'), 'the theme answered by id');
        await until(dark, 'the embed turned dark without a reload');
        await until(async () => (await pixel()) !== before, 'the timeline painted again in the dark colours');
        await send({ type: 'lockstep:set-theme', theme: 'light' });
        await until(async () => !(await dark()), 'light again');
        await send({ type: 'lockstep:set-theme', theme: 'auto' });
        await p.emulateMedia({ colorScheme: 'dark' });
        await until(dark, 'auto follows the reader\'s setting as it changes');
        // A refused theme is an error with the request's id.
        await send({ type: 'lockstep:set-theme', theme: 'sepia', id: 12 });
        await until(async () => (await got('lockstep:error')).some((m) => m.id === 12 && m.error.includes('sepia')), 'the refusal by id');
        // A playhead past the end is answered with the one used; play reports where it plays from.
        await send({ type: 'lockstep:set-playhead', ms: 1e9, id: 13 });
        await until(async () => (await got('lockstep:state')).some((m) => m.id === 13), 'the playhead answered');
        const end = (await got('lockstep:state')).find((m) => m.id === 13).playhead_ms;
        assert(end > 0 && end < 1e9, `clamped to the run's end: ${end}`);
        await send({ type: 'lockstep:set-playhead', ms: 300 });
        await until(async () => (await got('lockstep:state')).some((m) => m.playhead_ms === 300 && m.id === undefined), 'answered without an id too');
        await send({ type: 'lockstep:play', id: 14 });
        await until(async () => (await got('lockstep:play-state')).some((m) => m.playing), 'playing');
        const playing = (await got('lockstep:play-state')).find((m) => m.playing);
        assert(playing.playhead_ms >= 300, `plays from its playhead, not 0: ${playing.playhead_ms}`);
        const answered = (await got('lockstep:state')).find((m) => m.id === 14);
        assertEqual(answered && answered.playing, true, 'play answered by id');
        // A value a listed control cannot take: an error for the host, no notice in the frame.
        await send({ type: 'lockstep:set-toggle', edit: 'fencing accounts one_source all_accesses', id: 15 });
        await until(async () => (await got('lockstep:state')).some((m) => m.id === 15), 'the toggle answered by id');
        assertEqual(await frame.$('#notice'), null, 'no notice in the frame');
      } finally {
        await host.close();
      }
    },
  },
  {
    // The rest of a split bundle is missing (a partial upload, a file the server refuses): the
    // embed says so with the link to its run, and tells its host, as when the whole is missing.
    name: 'embed_hosts::a_missing_rest_of_the_bundle_shows_the_link_and_tells_the_host',
    async run(ctx) {
      await ctx.page.route('**/embed_rest.wasm', (r) => r.fulfill({ status: 404, body: 'not found' }));
      const page = (origin) =>
        `<iframe src="${ctx.baseURL}#/embed?v=1&b=05-fencing.toml&id=fig-3&origins=${encodeURIComponent(origin)}" title="Lockstep"></iframe>` +
        `<script>window.got=[];addEventListener('message',function(e){if(e.source===document.querySelector('iframe').contentWindow){window.got.push(e.data);}});</script>`;
      const host = await hostPage(page);
      try {
        await ctx.page.goto(host.url, { waitUntil: 'load' });
        const frame = await until(async () => ctx.page.frames().find((f) => f.url().includes('#/embed')), 'the frame');
        await frame.waitForSelector('#boot.failed', { timeout: 20000 });
        const text = await frame.textContent('#boot');
        assert(text.startsWith('The simulator could not load here') && text.includes('rest of its code'), `the sentence: ${text}`);
        const href = await frame.getAttribute('#boot-link', 'href');
        assert(href.includes('#/run?v=1&b=05-fencing.toml') && !href.includes('origins='), `the link to the run: ${href}`);
        assert(await frame.$eval('#app', (a) => a.hidden), 'no half-working view beside it');
        const got = () => ctx.page.evaluate(() => window.got);
        await until(async () => (await got()).some((m) => m && m.type === 'lockstep:error'), 'the host to hear of it');
        const error = (await got()).find((m) => m.type === 'lockstep:error');
        assert(error.error.includes('rest of its code') && error.embed === 'fig-3' && error.protocol === 1, JSON.stringify(error));
      } finally {
        await host.close();
      }
      ctx.errors.splice(0, ctx.errors.length, ...ctx.errors.filter((e) => !/embed_rest\.wasm|404|Failed to load resource/.test(e)));
    },
  },
  {
    // The host helper, as the docs use it: two embeds on one page, requests in flight to both
    // at once, each answer to the request that carries its id, never crossed.
    name: 'embed_hosts::lockstep_host_drives_two_embeds_by_id_without_crossing_replies',
    async run(ctx) {
      const html = block('html', '### The host helper');
      const js = block('js', '### The host helper');
      const host = await hostPage((origin) => `${localise(html, ctx.baseURL, origin)}\n<script type="module">${js}\nwindow.done = true;</script>`);
      const logged = [];
      ctx.page.on('console', (m) => {
        if (m.type() === 'log') logged.push(m.text());
      });
      try {
        const p = ctx.page;
        await p.goto(host.url, { waitUntil: 'load' });
        await until(async () => p.evaluate(() => window.done === true), 'the documented script to run to its end', 30000);
        assert(logged[0].startsWith('Exclusion broken') && logged[0].includes('fast-1'), `the two verdicts: ${logged[0]}`);
        assert(logged.some((l) => l.includes('does not offer')), `the refusal, with its reason: ${logged.join(' | ')}`);
        // Both frames sized by the helper alone (no embed-size.js on this page).
        const heights = await p.$$eval('iframe', (fs) => fs.map((f) => f.style.height));
        assert(heights.every(sizedByEmbed), `both frames sized: ${heights}`);
        // Many requests at once to both: each answer is its own embed's.
        const crossed = await p.evaluate(async () => {
          const all = [];
          for (let i = 0; i < 10; i++) {
            for (const name of ['fencing', 'partition']) {
              all.push(Lockstep.embed(name).request({ type: 'lockstep:get-state' }).then((r) => [name, r]));
            }
          }
          const answers = await Promise.all(all);
          return answers.filter(([name, r]) => r.embed !== name).length + (new Set(answers.map(([, r]) => r.id)).size === 20 ? 0 : 100);
        });
        assertEqual(crossed, 0, 'no answer crossed, every id its own');
        // The theme, to both.
        await p.evaluate(() => Lockstep.setTheme('dark'));
        for (const frame of p.frames().filter((f) => f.url().includes('#/embed'))) {
          await until(async () => (await frame.evaluate(() => document.documentElement.dataset.theme)) === 'dark', 'each embed dark');
        }
      } finally {
        await host.close();
      }
    },
  },
  {
    // The site served under a sub-path (https://example.org/lockstep/) by a plain static
    // server, with no rewrite: every view is styled and works, and every file it asks for is
    // found there (a request outside the sub-path is a 404, a console error, a failed test).
    name: 'embed_hosts::the_site_under_a_sub_path_is_styled_and_works',
    async run(ctx) {
      const site = await serveDir(process.env.E2E_DIST || path.join(ROOT, 'dist'), { prefix: '/lockstep' });
      const outside = [];
      const requests = watchRequests(ctx.page);
      ctx.page.on('request', (r) => {
        const url = new URL(r.url());
        if (url.origin === new URL(site.url).origin && !url.pathname.startsWith('/lockstep/')) outside.push(url.pathname);
      });
      try {
        assert(site.url.endsWith('/lockstep/'), site.url);
        for (const [address, shown] of [
          ['#/sandbox', '#verdict-headline'],
          ['#/run?v=1&b=05-fencing.toml', '#verdict-headline'],
          ['#/embed?v=1&b=05-fencing.toml&controls=fencing%20accounts', '#embed-headline'],
          ['#/lessons', 'main'],
          ['#/lessons/fencing', 'main'],
        ]) {
          await ctx.page.goto('about:blank');
          await ctx.page.goto(site.url + address, { waitUntil: 'load' });
          await ctx.page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 30000 });
          await ctx.page.waitForSelector(shown, { timeout: 20000 });
          const styled = await ctx.page.evaluate(() => ({
            sheet: [...document.styleSheets].map((s) => s.href).join(' '),
            bg: getComputedStyle(document.documentElement).getPropertyValue('--bg').trim(),
          }));
          assert(styled.sheet.includes('/lockstep/style.css') && styled.bg !== '', `${address}: styled (${JSON.stringify(styled)})`);
          // What each view asks for once it is up, before the next view replaces it: the rest
          // of its bundle (asked for by a timer once the view is ready, so waited for by its
          // flag) and what follows from that (a lesson's view fetches the other lessons and the
          // folder's index). Once all of it has come and been handled, the view asks for
          // nothing more by itself; a request outside /lockstep/ on the way is in `outside`.
          await until(() => ctx.page.evaluate(() => Boolean(globalThis.__lockstepSplit && globalThis.__lockstepSplit.loaded)), `${address}: the rest of the bundle loaded`);
          await requests.quiet(ctx.page, `${address}: every file it asked for to have come`);
        }
        // The scripts a host page loads from the site are there too.
        for (const file of ['embed-size.js', 'lockstep-host.js', 'sw.js']) {
          const status = await ctx.page.evaluate(async (u) => (await fetch(u)).status, site.url + file);
          assertEqual(status, 200, file);
        }
        assertEqual(outside.join(' '), '', 'nothing asked for outside /lockstep/');
      } finally {
        await site.close();
      }
    },
  },
  {
    name: 'embed_hosts::a_narrow_frame_says_the_verdict_in_one_line',
    viewport: { width: 420, height: 800 },
    async run(ctx) {
      await ctx.page.goto(`${ctx.baseURL}#/embed?b=06-partition.toml`, { waitUntil: 'load' });
      await ctx.page.waitForSelector('#embed-headline-short');
      const summary = await ctx.text('#embed-headline-short summary');
      assert(/^(✗ )?Exclusion broken: \d+ overlaps?/.test(summary), `one line: ${summary}`);
      const box = await ctx.page.$eval('#embed-headline-short summary', (s) => s.getBoundingClientRect().height);
      assert(box < 60, `the line is short: ${box}px high`);
      await ctx.page.click('#embed-headline-short summary');
      assert((await ctx.text('#embed-headline')).includes('both held'), 'the sentence on demand');
    },
  },
  {
    // The Docusaurus recipe's MDX block: its component and its use, compiled as MDX compiles
    // JSX (React's automatic runtime) and rendered by React on a host of its own.
    name: 'embed_hosts::the_documented_docusaurus_component_renders_and_sizes_the_run',
    async run(ctx) {
      const module = block('jsx', '**Docusaurus (MDX)**');
      const use = block('mdx', '**Docusaurus (MDX)**').split('\n').filter((l) => l.startsWith('<Lockstep ')).join('\n');
      assert(use.startsWith('<Lockstep '), `the page uses the component: ${use}`);
      let origin = '';
      const scripts = new Map();
      const host = await serveHtml(() => `<!doctype html><html lang="en"><head><title>docs</title></head><body><main id="root"></main><script type="module">${scripts.get(origin)}</script></body></html>`);
      origin = host.origin;
      try {
        const entry = `${localise(module, ctx.baseURL, origin)}
import {createRoot} from 'react-dom/client';
createRoot(document.getElementById('root')).render(<>${localise(use, ctx.baseURL, origin)}</>);
`;
        // Docusaurus' colour mode, as its theme gives it to a component: here a switch the test
        // flips, as a reader flips the site's theme.
        const colorMode = {
          name: 'docusaurus-theme',
          setup(b) {
            b.onResolve({ filter: /^@docusaurus\/theme-common$/ }, () => ({ path: 'theme-common', namespace: 'stub' }));
            b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({
              contents: `import {useSyncExternalStore} from 'react';
export function useColorMode() {
  const colorMode = useSyncExternalStore((f) => { addEventListener('colormode', f); return () => removeEventListener('colormode', f); }, () => window.colorMode || 'light');
  return {colorMode};
}`,
              loader: 'js',
              resolveDir: ROOT,
            }));
          },
        };
        const bundled = await build({
          stdin: { contents: entry, loader: 'jsx', resolveDir: ROOT },
          bundle: true,
          write: false,
          format: 'esm',
          jsx: 'automatic',
          plugins: [colorMode],
          define: { 'process.env.NODE_ENV': '"production"' },
          logLevel: 'silent',
        });
        scripts.set(origin, bundled.outputFiles[0].text);
        await ctx.page.goto(host.url, { waitUntil: 'load' });
        const frame = await until(async () => ctx.page.frames().find((f) => f.url().includes('#/embed')), 'the frame');
        await frame.waitForSelector('#embed-headline', { timeout: 20000 });
        assert((await frame.textContent('#embed-headline')).includes('Exclusion'), 'the run is shown');
        await until(
          async () => sizedByEmbed(await ctx.page.$eval('iframe', (f) => f.style.height)),
          'the component to size the frame from the embed',
        );
        ctx.note(`frame height ${await ctx.page.$eval('iframe', (f) => f.style.height)}`);
        // The site's theme switch: the embed follows it, without a reload.
        const dark = async () => {
          const [r, g, b] = (await frame.evaluate(() => getComputedStyle(document.body).backgroundColor)).match(/\d+/g).map(Number);
          return r + g + b < 200;
        };
        assert(!(await dark()), 'light, as the site is');
        await ctx.page.evaluate(() => { window.colorMode = 'dark'; dispatchEvent(new Event('colormode')); });
        await until(dark, 'the embed to follow the site to dark');
        await ctx.page.evaluate(() => { window.colorMode = 'light'; dispatchEvent(new Event('colormode')); });
        await until(async () => !(await dark()), 'and back to light');
      } finally {
        await host.close();
      }
    },
  },
];
