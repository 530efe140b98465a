// The mdBook and Docusaurus recipes of docs/embedding.md, built with the real tools by
// scripts/hosts.sh (which runs this spec): each built host is served on the loopback port its
// build names, the Lockstep site (dist/) on another, and the host's page shows the run, sizes
// the frame, and switches the embed's theme when the reader uses the host's own theme switch.
//
//   ./scripts/hosts.sh      (installs, builds, then: node tests/e2e/run.mjs real_hosts --spec tests/e2e/specs/real_hosts.mjs)
import fs from 'node:fs';
import path from 'node:path';
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { ROOT } from '../lib/cli.mjs';
import { serveDir } from '../lib/server.mjs';

const HOSTS = path.join(ROOT, 'target', 'hosts');
const DIST = process.env.E2E_DIST || path.join(ROOT, 'dist');

/** The ports the hosts were built for (scripts/hosts-recipes.mjs). */
function ports() {
  const file = path.join(HOSTS, 'ports.json');
  assert(fs.existsSync(file), `${file} is missing: the hosts are built by ./scripts/hosts.sh, which runs this spec`);
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** Serves the built host and the site on the ports the build names, runs `body`, stops both. */
async function serving(hostDir, hostPort, appPort, body) {
  assert(fs.existsSync(path.join(hostDir, 'index.html')), `${hostDir} is not built: run ./scripts/hosts.sh`);
  const listen = async (dir, port) => {
    try {
      return await serveDir(dir, { port });
    } catch (e) {
      throw new Error(`port ${port}, which the built host names, is taken (${e.code}): run ./scripts/hosts.sh again`);
    }
  };
  const host = await listen(hostDir, hostPort);
  let app;
  try {
    app = await listen(DIST, appPort);
    return await body(host.url);
  } finally {
    await host.close();
    if (app) await app.close();
  }
}

/**
 * Before any page script: the host page keeps every Lockstep message it hears, with the index
 * of the frame it came from, so a test reads the heights the embed reported.
 */
async function listenToEmbeds(ctx) {
  await ctx.context.addInitScript(() => {
    if (window !== window.top) return;
    window.lockstepHeard = [];
    addEventListener('message', (e) => {
      if (!e.data || typeof e.data.type !== 'string' || !e.data.type.startsWith('lockstep:')) return;
      const frame = [...document.querySelectorAll('iframe')].findIndex((f) => f.contentWindow === e.source);
      window.lockstepHeard.push({ frame, ...e.data });
    });
  });
}

/** The embed frame of the page (the only one), once it has drawn its run. */
async function embedFrame(page) {
  const frame = await until(async () => page.frames().find((f) => f.url().includes('#/embed')), 'the embed frame', 30000);
  await frame.waitForSelector('#embed-headline', { state: 'attached', timeout: 30000 });
  return frame;
}

/** The frame's height is the content's height the embed reported last. */
async function assertSized(ctx) {
  const sized = await until(async () => {
    const [shown, heard] = await ctx.page.evaluate(() => {
      const frame = document.querySelector('iframe');
      const heights = window.lockstepHeard.filter((m) => m.type === 'lockstep:height' && m.frame === 0);
      return [frame.getBoundingClientRect().height, heights.length ? heights[heights.length - 1].px : null];
    });
    return heard !== null && heard > 100 && Math.abs(shown - heard) < 1 ? { shown, heard } : null;
  }, 'the frame to take the height the embed reported');
  ctx.note(`frame ${sized.shown}px, content ${sized.heard}px`);
  return sized;
}

/** The embed's theme as the app sets it on its <html>, and whether its page is drawn dark. */
async function embedTheme(frame) {
  return frame.evaluate(() => {
    const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number);
    return { theme: document.documentElement.dataset.theme || 'auto', dark: r + g + b < 200 };
  });
}

async function untilTheme(frame, theme, what) {
  await until(async () => {
    const now = await embedTheme(frame);
    return now.theme === theme && now.dark === (theme === 'dark');
  }, what);
}

/** Marks the host page and the embed, so a reload of either (which drops the mark) shows. */
async function mark(page, frame) {
  await page.evaluate(() => { window.notReloaded = true; });
  await frame.evaluate(() => { window.notReloaded = true; });
}

async function assertNotReloaded(page, frame) {
  assert(await page.evaluate(() => window.notReloaded === true), 'the host page was not reloaded');
  assert(await frame.evaluate(() => window.notReloaded === true), 'the embed was not reloaded');
}

/**
 * mdBook's theme menu, as a reader uses it: the brush button (the menu stays open after a
 * pick), then a theme.
 */
async function pickMdbookTheme(page, theme) {
  if (!(await page.isVisible('#theme-list'))) await page.click('#theme-toggle');
  await page.waitForSelector(`#theme-list #${theme}`, { state: 'visible' });
  await page.click(`#theme-list #${theme}`);
  await until(async () => page.evaluate((t) => document.documentElement.classList.contains(t), theme), `the book's theme to be ${theme}`);
}

const DARK_BOOK_THEMES = ['coal', 'navy', 'ayu'];

/**
 * One chapter of the built book: the run shown, the frame sized, and the embed in the theme
 * the book opens in (`opens`, which mdBook keeps from page to page), then in each theme the
 * reader picks.
 */
async function mdbookChapter(ctx, url, { title, caption, opens, picks }) {
  const page = ctx.page;
  await page.goto(url, { waitUntil: 'load' });
  const frame = await embedFrame(page);
  assertEqual((await frame.textContent('.embed-title')).trim(), title, 'the run the chapter names');
  if (caption) assertEqual((await frame.textContent('#embed-caption')).trim(), caption, 'its caption');
  await assertSized(ctx);
  assert(await page.evaluate((t) => document.documentElement.classList.contains(t), opens), `the book opens in its ${opens} theme`);
  const shade = (theme) => (DARK_BOOK_THEMES.includes(theme) ? 'dark' : 'light');
  // The theme recipe's script has set the embed to the book's theme.
  await untilTheme(frame, shade(opens), `the embed to take the book's ${opens} theme`);
  await mark(page, frame);
  for (const theme of picks) {
    await pickMdbookTheme(page, theme);
    await untilTheme(frame, shade(theme), `the embed to turn ${shade(theme)} with the book's ${theme} theme`);
    if (theme === 'navy') await ctx.screenshot('navy');
  }
  await assertNotReloaded(page, frame);
}

/** Docusaurus' colour-mode button, clicked until the site is in `mode` (it may pass "system"). */
async function pickDocusaurusMode(page, mode) {
  const button = 'button[aria-label^="Switch between dark and light mode"]';
  for (let clicks = 0; clicks < 3; clicks++) {
    if ((await page.evaluate(() => document.documentElement.dataset.theme)) === mode) return;
    const before = await page.getAttribute(button, 'aria-label');
    await page.click(button);
    await until(async () => (await page.getAttribute(button, 'aria-label')) !== before, 'the colour-mode button to switch');
  }
  assertEqual(await page.evaluate(() => document.documentElement.dataset.theme), mode, 'the site\'s colour mode after three clicks');
}

export const tests = [
  {
    name: 'real_hosts::the_built_mdbook_shows_the_run_and_follows_the_theme_menu',
    async run(ctx) {
      const p = ports();
      await listenToEmbeds(ctx);
      await serving(path.join(HOSTS, 'book', 'book'), p.book, p.bookApp, async (url) => {
        // The preprocessor's block, and the snippet pasted by hand, each with the theme recipe.
        await mdbookChapter(ctx, `${url}fencing.html`, {
          title: 'Fencing tokens at the resource',
          caption: 'The stale write, refused.',
          opens: 'light',
          picks: ['navy', 'light', 'coal', 'rust', 'ayu'],
        });
        const src = await ctx.page.getAttribute('iframe', 'src');
        assert(src.startsWith(`http://127.0.0.1:${p.bookApp}/#/embed?`) && src.includes('id=fencing'), `the preprocessor's frame: ${src}`);
        // The book keeps the reader's last theme, a dark one: the next chapter's embed opens dark.
        await mdbookChapter(ctx, `${url}pasted.html`, { title: 'Fencing tokens at the resource', opens: 'ayu', picks: ['light'] });
      });
    },
  },
  {
    name: 'real_hosts::the_built_docusaurus_site_shows_the_run_and_follows_the_colour_mode',
    async run(ctx) {
      const p = ports();
      await listenToEmbeds(ctx);
      await serving(path.join(HOSTS, 'docusaurus', 'build'), p.docusaurus, p.docusaurusApp, async (url) => {
        const page = ctx.page;
        await page.goto(`${url}docs/fencing/`, { waitUntil: 'load' });
        const frame = await embedFrame(page);
        assertEqual((await frame.textContent('.embed-title')).trim(), 'Fencing tokens at the resource', 'the run the page names');
        await assertSized(ctx);
        assertEqual(await page.evaluate(() => document.documentElement.dataset.theme), 'light', 'the site opens light');
        await untilTheme(frame, 'light', 'the embed to take the site\'s light mode');
        await mark(page, frame);
        await pickDocusaurusMode(page, 'dark');
        await untilTheme(frame, 'dark', 'the embed to turn dark with the site');
        await ctx.screenshot('dark');
        await pickDocusaurusMode(page, 'light');
        await untilTheme(frame, 'light', 'the embed to turn light again with the site');
        await assertNotReloaded(page, frame);
        // A reader who turned the site dark on another page and comes to this one through the
        // sidebar (the site changes pages in place): the new embed opens in the site's mode.
        await page.click('.menu a[href="/docs/intro"]');
        await until(async () => !page.frames().some((f) => f.url().includes('#/embed')), 'the page without the embed');
        await pickDocusaurusMode(page, 'dark');
        await page.evaluate(() => { window.lockstepHeard.length = 0; });
        await page.click('.menu a[href="/docs/fencing"]');
        const again = await embedFrame(page);
        await untilTheme(again, 'dark', 'the new embed to open in the site\'s dark mode');
        await assertSized(ctx);
        assert(await page.evaluate(() => window.notReloaded === true), 'the site changed pages in place');
      });
    },
  },
];
