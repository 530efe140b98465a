// Paper and projector: the facilitator's two printouts (dark text on white paper whatever the
// screen's theme; the handout of the lessons chosen, with each step's narration, picture and
// link and no answer, the key with every answer), an exercise's goal, controls and Check on
// one 1366×768 screen (in presenter mode too, with every lane label drawn whole), the header's
// theme switch kept across a reload, and presenter mode (larger type, the timeline on the
// first screen of a zoomed projector, the whole run across its width without sideways
// scrolling).
import { assert, assertEqual, until } from '../lib/harness.mjs';
import { shippedLessons } from '../lib/checks.mjs';
import { axe } from './a11y.mjs';

const EXERCISE_ID = 'two-sources-one-table';
// An exercise solved by one choice in one menu: lesson 1's, the batch job moved to `new`.
const MENU_EXERCISE = '#/lessons/two-orders/retire-old';
const MENU_EXERCISE_ID = 'retire-old';

async function openFacilitator(ctx) {
  await ctx.open('#/facilitator');
  await ctx.page.waitForSelector('.handout-exercise', { timeout: 30000 });
}

/** Where an element is, relative to the viewport. */
function box(ctx, selector) {
  return ctx.page.$eval(selector, (el) => {
    const r = el.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height };
  });
}

/** Turns presenter mode on from the course's list; the page keeps it for the views after. */
async function presenterOn(ctx) {
  await ctx.open('#/lessons');
  await ctx.page.waitForSelector('#course li');
  if ((await ctx.attr('#presenter', 'aria-pressed')) !== 'true') await ctx.page.click('#presenter');
  await until(async () => (await ctx.page.evaluate(() => document.documentElement.dataset.presenter)) === 'true', 'presenter mode');
}

/**
 * The selectors of what a facilitator acts on in an exercise: its goal, every control the
 * exercise offers (each menu, field, box and single-choice output), and Check.
 */
async function exerciseParts(ctx) {
  const controls = await ctx.page.$$eval('section.controls', (sections) =>
    sections.flatMap((sec) =>
      [...sec.querySelectorAll('select, input, output')].filter((el) => el.getClientRects().length > 0).map((el) => `#${CSS.escape(el.id)}`),
    ),
  );
  return ['#goal', ...controls, '#check'];
}

/** The lanes' labels a scenario gives, in the timeline's order: clients, services, resources, faults. */
function laneNames(scenario) {
  const clients = scenario.clients.flatMap((c) => Array.from({ length: c.count }, (_, i) => `${c.name}-${i + 1}`));
  const services = scenario.services.map((s) => `service ${s.name}`);
  const resources = scenario.resources.map((r) => r.name);
  return [...clients, ...services, ...resources, 'faults'];
}

/** The timeline's lane labels as the canvas draws them are the lanes' whole names. */
async function checkLaneLabels(ctx, where, scenario) {
  await ctx.page.waitForSelector('#timeline[data-lane-labels]');
  const drawn = await ctx.page.$eval('#timeline', (t) => t.dataset.laneLabels.split('\n'));
  assertEqual(JSON.stringify(drawn), JSON.stringify(laneNames(scenario)), `${where}: the lane labels drawn`);
}

/**
 * Every printed element's text colour and the paper's colour, as relative luminances (0 is
 * black, 1 white): the lightest text found and the page's background.
 */
function printedColours(ctx) {
  return ctx.page.evaluate(() => {
    const lum = (css) => {
      const m = css.match(/[\d.]+/g);
      if (!m) return null;
      const [r, g, b] = m.slice(0, 3).map((v) => {
        const c = Number(v) / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      const alpha = m.length > 3 ? Number(m[3]) : 1;
      return { l: 0.2126 * r + 0.7152 * g + 0.0722 * b, alpha };
    };
    let lightest = { l: -1, what: '' };
    for (const el of document.querySelectorAll('#sheet, #sheet *')) {
      if (!el.getClientRects().length || !el.textContent.trim()) continue;
      const c = lum(getComputedStyle(el).color);
      if (c && c.l > lightest.l) lightest = { l: c.l, what: `${el.tagName.toLowerCase()}.${el.className} ${getComputedStyle(el).color}` };
    }
    const bg = (el) => {
      const c = lum(getComputedStyle(el).backgroundColor);
      return c && c.alpha > 0 ? c.l : null;
    };
    return { lightest, body: bg(document.body), html: bg(document.documentElement) };
  });
}

async function checkPrintedDarkOnWhite(ctx, which) {
  await ctx.page.emulateMedia({ media: 'print', colorScheme: 'dark' });
  await ctx.frames(2);
  const c = await printedColours(ctx);
  assert(c.lightest.l >= 0 && c.lightest.l < 0.05, `${which}: printed text is not dark: ${c.lightest.what} (luminance ${c.lightest.l.toFixed(3)})`);
  for (const [where, l] of [['body', c.body], ['html', c.html]]) {
    assert(l === null || l > 0.95, `${which}: the ${where}'s background is not white (luminance ${l})`);
  }
  assert(!(await ctx.page.isVisible('header nav')), `${which}: the navigation is printed`);
  assert(!(await ctx.page.isVisible('#codes-section')), `${which}: the checker is printed`);
  assert(!(await ctx.page.isVisible('#theme')), `${which}: the theme switch is printed`);
  assert(await ctx.page.isVisible('.sheet-title'), `${which}: the sheet's title is not printed`);
  // No heading is left alone at a page's foot.
  const breaks = await ctx.page.$$eval('#sheet h3, #sheet h4', (hs) => hs.map((h) => getComputedStyle(h).breakAfter));
  assert(breaks.every((b) => b === 'avoid' || b === 'avoid-page'), `headings may break after: ${breaks.join(', ')}`);
  const inside = await ctx.page.$eval('.handout-exercise', (e) => getComputedStyle(e).breakInside);
  assert(inside === 'avoid' || inside === 'avoid-page', `an exercise may break inside: ${inside}`);
  await ctx.page.emulateMedia({ media: 'screen', colorScheme: 'dark' });
}

/**
 * The words only the key may hold: each exercise's solution and other passing answers, and what
 * the app says to each wrong approach.
 */
async function answerWords(ctx) {
  return ctx.page.$$eval('.answers .solution .edits, .answers .also .edits, .answers .misconceptions .said', (els) =>
    els.map((e) => e.textContent.replace(/\s+/g, ' ').trim()).filter((t) => t.length > 3),
  );
}

export const tests = [
  {
    name: 'workshop::handout_and_key_print_dark_on_white_and_only_the_key_has_answers',
    colorScheme: 'dark',
    async run(ctx) {
      await openFacilitator(ctx);
      // The key is what the page shows first: every answer.
      assert(await ctx.page.isChecked('#sheet-key'), 'the answer key is shown first');
      const answers = await answerWords(ctx);
      assert(answers.length >= 2, `the key shows the answers: ${JSON.stringify(answers)}`);
      const keyText = await ctx.text('#sheet');
      assert(/Solution:/.test(keyText), 'the key names the solution');
      assert(/Wrong approaches the app recognises/.test(keyText), 'the key lists the misconceptions');
      await checkPrintedDarkOnWhite(ctx, 'the key');

      await ctx.page.check('#sheet-handout');
      await ctx.page.waitForSelector('#sheet.sheet-handout');
      assertEqual(await ctx.text('#print'), 'Print the handout', 'the print button names the handout');
      // No lesson until the facilitator chooses one.
      assert(await ctx.exists('#handout-empty'), 'the empty handout says to choose lessons');
      assertEqual(await ctx.page.$$eval('.handout-lesson', (o) => o.length), 0, 'lessons nobody chose');
      await ctx.page.check('#handout-lesson-fencing');
      await ctx.page.waitForSelector(`#sheet [data-exercise="${EXERCISE_ID}"]`);
      const handout = await ctx.text('#sheet');
      for (const w of answers) assert(!handout.includes(w), `the handout gives an answer away: ${JSON.stringify(w)}`);
      for (const w of ['Solution:', 'Also passes:', 'Wrong approaches']) assert(!handout.includes(w), `the handout says ${w}`);
      assertEqual(await ctx.page.$$eval('.answers', (a) => a.length), 0, 'answers on the handout');
      assert(/Goal:/.test(handout), 'the handout has the goals');
      await checkPrintedDarkOnWhite(ctx, 'the handout');
      assert((await ctx.text('.sheet-title')).includes('handout'), 'the printed title names the handout');
    },
  },
  {
    name: 'workshop::handout_of_one_lesson_shows_its_steps_pictures_and_links_and_no_hint_or_solution',
    async run(ctx) {
      await openFacilitator(ctx);
      const lesson = (await shippedLessons(ctx.page)).find((l) => l.id === 'fencing');
      // The lesson's own words, Markdown taken out, as the sheet shows them.
      const words = (t) => t.replace(/[`*]/g, '').replace(/\s+/g, ' ').trim();
      await ctx.page.check('#sheet-handout');
      await ctx.page.waitForSelector('#handout-lessons');
      assert(!(await ctx.page.isChecked('#handout-hint')), 'no hint unless asked for');
      await ctx.page.check('#handout-lesson-fencing');
      await ctx.page.waitForSelector('#sheet .handout-lesson[data-lesson="fencing"]');
      assertEqual(await ctx.page.$$eval('#sheet .handout-lesson', (ls) => ls.map((l) => l.dataset.lesson).join(' ')), 'fencing', 'the lesson chosen, alone');

      // Every step, in order, with its title and narration; a picture of its run unless it asks
      // a prediction (the run is the answer), and then the question.
      const steps = await ctx.page.$$eval('#sheet .handout-step', (ss) =>
        ss.map((s) => ({
          id: s.dataset.step,
          title: s.querySelector('h4').textContent,
          narration: s.querySelector('.narration').textContent.replace(/\s+/g, ' ').trim(),
          pictures: s.querySelectorAll('img').length,
          question: Boolean(s.querySelector('.question')),
          link: s.querySelector('.link a').getAttribute('href'),
        })),
      );
      assertEqual(steps.map((s) => s.id).join(' '), lesson.steps.map((s) => s.id).join(' '), 'every step, in order');
      const page = await ctx.page.evaluate(() => location.href.split('#')[0]);
      let pictured = 0;
      for (const [k, s] of steps.entries()) {
        const step = lesson.steps[k];
        assert(s.title.endsWith(words(step.title)), `${s.id}: the title ${s.title}`);
        assert(s.narration.length > 40 && !s.narration.includes('`'), `${s.id}: the narration, rendered: ${s.narration}`);
        assertEqual(s.pictures, step.prediction ? 0 : 1, `${s.id}: its picture`);
        assertEqual(s.question, Boolean(step.prediction), `${s.id}: its question`);
        assertEqual(s.link, `${page}#/lessons/fencing/${s.id}`, `${s.id}: its link, at the page's address`);
        pictured += s.pictures;
      }
      assert(pictured >= 2, `${pictured} pictures`);
      // Each picture is the course's file of its step, loaded.
      await until(
        () => ctx.page.$$eval('#sheet img', (is) => is.every((i) => i.complete && i.naturalWidth > 0)),
        'every picture to load',
      );
      const sources = await ctx.page.$$eval('#sheet .handout-step', (ss) =>
        ss.filter((s) => s.querySelector('img')).map((s) => [s.dataset.step, s.querySelector('img').getAttribute('src')]),
      );
      for (const [id, src] of sources) assertEqual(src, `course/fencing.${id}.run.svg`, `${id}: the picture's file`);

      // The exercise: its goal and room to write, no hint, no solution, no answer of any kind.
      const sheet = (await ctx.text('#sheet')).replace(/\s+/g, ' ');
      assertEqual(await ctx.page.$$eval('#sheet .hint', (h) => h.length), 0, 'a hint nobody asked for');
      assert(!sheet.includes('`'), 'raw backticks on the handout');
      for (const e of lesson.exercises) {
        assert(sheet.includes(words(e.goal)), `${e.id}: the goal`);
        assert(await ctx.exists(`#sheet [data-exercise="${e.id}"] .write`), `${e.id}: room to write`);
        const secrets = [...e.hints, e.explanation, e.success, ...e.misconceptions.map((m) => m.hint)];
        for (const t of secrets.filter((t) => t && t.length > 3)) assert(!sheet.includes(words(t)), `${e.id}: the handout says ${t}`);
      }
      for (const st of lesson.steps) {
        if (st.prediction) assert(!sheet.includes(words(st.prediction.why)), `${st.id}: the prediction's answer`);
        if (st.gate) assert(!sheet.includes(words(st.gate.passed)), `${st.id}: the gate's answer`);
      }
      assertEqual(await ctx.page.$$eval('#sheet .answers, #sheet .solution', (a) => a.length), 0, 'answers on the handout');

      // Asked for, the first hint alone.
      await ctx.page.check('#handout-hint');
      await ctx.page.waitForSelector('#sheet .hint');
      const hint = (await ctx.text(`#sheet [data-exercise="${EXERCISE_ID}"] .hint`)).replace(/\s+/g, ' ');
      const hints = lesson.exercises.find((e) => e.id === EXERCISE_ID).hints;
      assert(hint.includes(words(hints[0])), `the first hint: ${hint}`);
      const hinted = (await ctx.text('#sheet')).replace(/\s+/g, ' ');
      for (const h of hints.slice(1)) assert(!hinted.includes(words(h)), `a later hint: ${h}`);

      // The links go to the room's address once it is typed; one that does not read is said so.
      await ctx.page.fill('#handout-link-base', 'http://10.0.0.5:8000');
      await until(
        async () => (await ctx.attr('#sheet .handout-step .link a', 'href')) === `http://10.0.0.5:8000/#/lessons/fencing/${steps[0].id}`,
        'the links at the room\'s address',
      );
      await ctx.page.fill('#handout-link-base', '10.0.0.5:8000');
      await ctx.page.waitForSelector('#handout-link-error');
      assert((await ctx.text('#handout-link-error')).includes('http://'), 'the reason');
      await axe(ctx, 'the handout with its choices');
      await checkPrintedDarkOnWhite(ctx, 'the handout of one lesson');
    },
  },
  {
    name: 'workshop::every_exercise_fits_one_1366x768_screen',
    viewport: { width: 1366, height: 768 },
    async run(ctx) {
      await ctx.open('#/lessons');
      const course = await shippedLessons(ctx.page);
      let n = 0;
      for (const l of course) {
        for (const e of l.exercises) {
          await ctx.open(`#/lessons/${l.id}/${e.id}`);
          await ctx.page.waitForSelector(`#view-title[data-place="${e.id}"]`, { timeout: 20000 });
          await ctx.frames(2);
          const seen = {};
          // The goal, the controls the exercise is about (the only ones its view offers) and
          // Check, all on the first screen.
          for (const sel of ['#goal', 'section.controls', '#check']) {
            const b = await box(ctx, sel);
            seen[sel] = `${Math.round(b.top)}..${Math.round(b.bottom)}`;
            assert(b.height > 0, `${l.id}/${e.id}: ${sel} is not drawn`);
            assert(b.top >= 0 && b.bottom <= 768 && b.left >= 0 && b.right <= 1366, `${l.id}/${e.id}: ${sel} is at ${JSON.stringify(b)}, outside the 1366×768 screen`);
          }
          assertEqual(await ctx.page.evaluate(() => window.scrollY), 0, `${l.id}/${e.id}: the page is scrolled`);
          ctx.note(`${l.id}/${e.id}: ${JSON.stringify(seen)}`);
          n++;
        }
      }
      assert(n >= 2, `the course has ${n} exercises`);
      // A control still works where it now is.
      await ctx.open(MENU_EXERCISE);
      await ctx.page.waitForSelector(`#view-title[data-place="${MENU_EXERCISE_ID}"]`, { timeout: 20000 });
      const b = await box(ctx, '#protocol-batch');
      assert(b.top >= 0 && b.bottom <= 768, `#protocol-batch is at ${b.top}..${b.bottom}`);
      await ctx.page.selectOption('#protocol-batch', 'single:new');
      await until(async () => (await ctx.text('#verdict-headline')).startsWith('Exclusion holds'), 'the run to hold');
    },
  },
  {
    // Presenter mode's larger type at 1366×768: for every exercise of the course, once it is
    // scrolled into view, the goal, each of its controls and Check are on the screen together,
    // measured; and every lane's label on the timeline is drawn whole.
    name: 'workshop::presenter_mode_fits_each_exercise_on_one_1366x768_screen',
    viewport: { width: 1366, height: 768 },
    async run(ctx) {
      await presenterOn(ctx);
      const course = await shippedLessons(ctx.page);
      let n = 0;
      for (const l of course) {
        for (const e of l.exercises) {
          await ctx.open(`#/lessons/${l.id}/${e.id}`);
          await ctx.page.waitForSelector(`#view-title[data-place="${e.id}"]`, { timeout: 20000 });
          assertEqual(await ctx.page.evaluate(() => document.documentElement.dataset.presenter), 'true', 'presenter mode is on');
          await ctx.frames(2);
          const where = `${l.id}/${e.id}`;
          const selectors = await exerciseParts(ctx);
          assert(selectors.length >= 3, `${where}: the goal, Check and at least one control: ${selectors}`);
          // Scrolled so that the first of them is at the top of the screen (as far as the page
          // scrolls), each must then be inside the screen.
          const top = await ctx.page.evaluate((sels) => Math.min(...sels.map((s) => document.querySelector(s).getBoundingClientRect().top)) + window.scrollY, selectors);
          await ctx.page.evaluate((y) => window.scrollTo(0, y), Math.max(0, top - 4));
          await ctx.frames(2);
          let [highest, lowest] = [Infinity, 0];
          for (const sel of selectors) {
            const b = await box(ctx, sel);
            assert(b.height > 0 && b.width > 0, `${where}: ${sel} is not drawn`);
            assert(b.top >= 0 && b.bottom <= 768 && b.left >= 0 && b.right <= 1366, `${where}: ${sel} is at ${JSON.stringify(b)}, outside the 1366×768 screen with the goal`);
            [highest, lowest] = [Math.min(highest, b.top), Math.max(lowest, b.bottom)];
          }
          ctx.note(`${where}: the goal, ${selectors.length - 2} control(s) and Check within ${Math.round(lowest - highest)} px`);
          await checkLaneLabels(ctx, where, e.scenario);
          n++;
        }
      }
      assert(n >= 2, `the course has ${n} exercises`);
    },
  },
  {
    // The lane labels of every step of the course in presenter mode at 1366×768: each is drawn
    // whole, its words the lane's own ("service replica-locks", never "service replica-lo…").
    name: 'workshop::presenter_mode_draws_every_lane_label_whole_at_1366x768',
    viewport: { width: 1366, height: 768 },
    async run(ctx) {
      await presenterOn(ctx);
      const course = await shippedLessons(ctx.page);
      let n = 0;
      for (const l of course) {
        for (const s of l.steps) {
          await ctx.open(`#/lessons/${l.id}/${s.id}`);
          await ctx.page.waitForSelector(`#view-title[data-place="${s.id}"]`, { timeout: 20000 });
          await checkLaneLabels(ctx, `${l.id}/${s.id}`, s.scenario);
          n++;
        }
      }
      assert(n >= 40, `${n} steps`);
    },
  },
  {
    name: 'workshop::theme_switch_sets_light_dark_or_the_system_and_survives_a_reload',
    colorScheme: 'dark',
    async run(ctx) {
      await ctx.open('#/lessons');
      await ctx.page.waitForSelector('#course li');
      const bg = () => ctx.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const theme = () => ctx.page.evaluate(() => document.documentElement.dataset.theme || null);
      assertEqual(await ctx.value('#theme'), 'auto', 'the system decides at first');
      assertEqual(await theme(), null, 'no theme is set at first');
      const dark = await bg();
      await ctx.page.selectOption('#theme', 'light');
      await until(async () => (await theme()) === 'light', 'data-theme="light"');
      const light = await bg();
      assert(light !== dark, `the light theme changes the background (${dark} → ${light})`);
      await ctx.reload();
      await ctx.page.waitForSelector('#course li');
      assertEqual(await theme(), 'light', 'the light theme after a reload');
      assertEqual(await ctx.value('#theme'), 'light', 'the list says light after a reload');
      assertEqual(await bg(), light, 'the light background after a reload');
      await ctx.page.selectOption('#theme', 'dark');
      await until(async () => (await theme()) === 'dark', 'data-theme="dark"');
      assertEqual(await bg(), dark, 'the dark theme has the dark background');
      // Following the system again: a light system gives the light page.
      await ctx.page.selectOption('#theme', 'auto');
      await until(async () => (await theme()) === null, 'no data-theme');
      await ctx.page.emulateMedia({ colorScheme: 'light' });
      assertEqual(await bg(), light, 'the system is followed again');
      await ctx.reload();
      assertEqual(await ctx.value('#theme'), 'auto', 'following the system is kept');
    },
  },
  {
    name: 'workshop::presenter_mode_is_larger_and_kept',
    async run(ctx) {
      await ctx.open('#/lessons/fencing');
      await ctx.page.waitForSelector('#view-title[data-place]', { timeout: 20000 });
      const size = () => ctx.page.evaluate(() => parseFloat(getComputedStyle(document.body).fontSize));
      const before = await size();
      assertEqual(await ctx.attr('#presenter', 'aria-pressed'), 'false', 'presenter mode is off at first');
      await ctx.page.click('#presenter');
      await until(async () => (await size()) > before, 'the type to grow');
      const after = await size();
      assert(after >= before * 1.2, `presenter type ${after}px is not much larger than ${before}px`);
      assertEqual(await ctx.attr('#presenter', 'aria-pressed'), 'true', 'the switch says it is on');
      await ctx.reload();
      assertEqual(await size(), after, 'presenter mode survives a reload');
      await ctx.page.click('#presenter');
      await until(async () => (await size()) === before, 'the type to shrink back');
    },
  },
];

/**
 * A projector's screen zoomed: a CSS viewport of the screen's size over the zoom, with as many
 * device pixels per CSS pixel as the zoom, in presenter mode on a lesson's step.
 */
async function zoomedTimeline(ctx, screen, zoom) {
  const viewport = { width: Math.round(screen.width / zoom), height: Math.round(screen.height / zoom) };
  const context = await ctx.context.browser().newContext({ viewport, deviceScaleFactor: zoom, reducedMotion: 'reduce' });
  try {
    const page = await context.newPage();
    await page.goto(`${ctx.baseURL}#/lessons`, { waitUntil: 'load' });
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
    await page.click('#presenter');
    await page.goto(`${ctx.baseURL}#/lessons/fencing`, { waitUntil: 'load' });
    await page.waitForSelector('#view-title[data-place]', { timeout: 20000 });
    // The step asks a prediction; "Just show me" plays its run, with the playback and its zoom.
    if (await page.$('#show-me')) await page.click('#show-me');
    await page.waitForSelector('#zoom', { timeout: 20000 });
    // Clicking the answer scrolled to it; the first screen is what is measured.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForFunction(() => document.documentElement.dataset.presenter === 'true');
    // The view measures the timeline's box on its first render and again when presenter mode
    // changes the type (src/web/views.rs, use_measured_width), then draws the timeline that wide
    // (at least TIMELINE_WIDTH_MIN, 560 px). Once the drawn width is the box's width as it is
    // now, the last measuring has been drawn, and two frames later the layout read below is
    // the one the reader sees: a timeline that does not fit the screen fails the checks then.
    await page.waitForFunction(() => {
      const timeline = document.querySelector('#timeline');
      const box = document.querySelector('.timeline-box');
      return timeline && box && parseFloat(timeline.style.width) === Math.max(560, box.clientWidth);
    });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    return {
      viewport,
      ...(await page.evaluate(() => {
        const c = document.querySelector('#timeline canvas') || document.querySelector('#timeline');
        const r = c.getBoundingClientRect();
        const zoom = document.querySelector('#zoom');
        return {
          canvas: { top: r.top, bottom: r.bottom, left: r.left, right: r.right },
          scrollWidth: document.documentElement.scrollWidth,
          clientWidth: document.documentElement.clientWidth,
          zoom: zoom ? zoom.value : null,
        };
      })),
    };
  } finally {
    await context.close();
  }
}

tests.push(
  {
    name: 'workshop::presenter_timeline_on_the_first_screen_at_150_percent_of_1280x720',
    async run(ctx) {
      const r = await zoomedTimeline(ctx, { width: 1280, height: 720 }, 1.5);
      ctx.note(JSON.stringify(r));
      assert(r.scrollWidth <= r.clientWidth, `the page scrolls sideways: ${r.scrollWidth} > ${r.clientWidth}`);
      assert(r.canvas.left >= 0 && r.canvas.right <= r.viewport.width, `the timeline is at ${r.canvas.left}..${r.canvas.right} of ${r.viewport.width}`);
      assert(r.canvas.top >= 0 && r.canvas.bottom <= r.viewport.height, `the timeline is at ${r.canvas.top}..${r.canvas.bottom}, not on the first ${r.viewport.height} px`);
    },
  },
  {
    name: 'workshop::presenter_timeline_shows_the_whole_run_at_200_percent_of_1920x1080',
    async run(ctx) {
      const r = await zoomedTimeline(ctx, { width: 1920, height: 1080 }, 2);
      ctx.note(JSON.stringify(r));
      assert(r.scrollWidth <= r.clientWidth, `the page scrolls sideways: ${r.scrollWidth} > ${r.clientWidth}`);
      assert(r.canvas.left >= 0 && r.canvas.right <= r.viewport.width, `the timeline is at ${r.canvas.left}..${r.canvas.right} of ${r.viewport.width}`);
      assertEqual(r.zoom, '1', 'the whole run is in the window (zoom 1×)');
      assert(r.canvas.top >= 0 && r.canvas.top < r.viewport.height, `the timeline starts at ${r.canvas.top}, below the first screen`);
    },
  },
);
