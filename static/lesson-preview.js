// A place of a lesson (a step or an exercise) as the course drew it, shown while its simulator
// loads: its title, narration and a picture of its run (course/LESSON.PLACE.run.svg, drawn by
// the engine when the course's files were written; ui::course::place_pictures). A reader on a
// slow line reads the step from a few small files and plays it once the simulator has arrived.
//
// The picture is the run the live place opens with, so it is shown only where the live place
// will show that run: a shipped lesson's place, not a step whose goal the learner met before
// or an exercise they changed (the live place resumes their own run), and not while a lesson
// from the folder beside the site or one the learner opened might replace a shipped one. It shows no control: nothing on
// it acts on the run before the simulator can answer (its links go to other addresses, which
// drop it). The live view takes its place as soon as it draws anything but a loading note.

/** The compact form's version this preview reads (src/lesson/wire.rs). */
const WIRE_VERSION = 3;
const PROGRESS_KEY = 'lockstep.progress.v1';
const OPENED_KEY = 'lockstep.lessons.v1';
const DISPLAY_KEY = 'lockstep.display';

function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

/**
 * Whether the live place would show a run of the learner's own rather than its own: a step
 * whose goal they met, an exercise they changed (ui::course::LessonProgress).
 */
function resumes(lesson, place, exercise) {
  try {
    const progress = JSON.parse(stored(PROGRESS_KEY) || 'null');
    const mine = progress && progress.lessons && progress.lessons[lesson];
    const edits = mine && mine[exercise ? 'exercise_edits' : 'gate_edits'];
    return Boolean(edits && Object.prototype.hasOwnProperty.call(edits, place));
  } catch {
    // Unreadable progress counts as none in the page too.
    return false;
  }
}

/** Whether the learner opened a lesson file with this id, which replaces the shipped lesson. */
function replaced(lesson) {
  try {
    const opened = JSON.parse(stored(OPENED_KEY) || 'null');
    return Boolean(opened && Array.isArray(opened.files) && opened.files.some((f) => f && f.id === lesson));
  } catch {
    return false;
  }
}

function el(tag, className, ...children) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  e.append(...children);
  return e;
}

function inlines(items) {
  return (items || []).map(inline);
}

function inline(i) {
  if (i === 'line_break') return document.createElement('br');
  if ('text' in i) return document.createTextNode(i.text);
  if ('code' in i) return el('code', '', i.code);
  if ('emphasis' in i) return el('em', '', ...inlines(i.emphasis));
  if ('strong' in i) return el('strong', '', ...inlines(i.strong));
  // A link is shown as its words: the preview has nothing to follow.
  if ('link' in i) return el('span', '', ...inlines(i.link.content));
  return document.createTextNode('');
}

function blocks(list) {
  return (list || []).map(block);
}

function block(b) {
  if (b === 'rule') return document.createElement('hr');
  if ('paragraph' in b) return el('p', '', ...inlines(b.paragraph));
  if ('heading' in b) {
    const n = Math.min(6, b.heading.level + 2);
    return el(n >= 3 && n <= 5 ? `h${n}` : 'h6', '', ...inlines(b.heading.content));
  }
  if ('list' in b) {
    const list = el(b.list.start == null ? 'ul' : 'ol', '', ...b.list.items.map((item) => el('li', '', ...blocks(item))));
    if (b.list.start != null) list.setAttribute('start', String(b.list.start));
    return list;
  }
  if ('quote' in b) return el('blockquote', '', ...blocks(b.quote));
  if ('code' in b) {
    // Focusable, so that a long line can be scrolled from the keyboard.
    const pre = el('pre', '', el('code', '', b.code));
    pre.tabIndex = 0;
    return pre;
  }
  return document.createTextNode('');
}

/** A short text with its Markdown shown, as the lesson's file rendered it (lesson::narration::shown). */
function rich(lesson, text) {
  const found = (lesson.rich || []).find(([t]) => t === text);
  return found ? inlines(found[1]) : [document.createTextNode(text)];
}

/** The same text as plain words, its code bare, for a place that holds no markup (lesson::narration::plain). */
function plain(lesson, text) {
  return rich(lesson, text).map((n) => n.textContent).join('');
}

/** The words of where a place is, as the live view says them (ui::course::place_words). */
function where(lesson, place) {
  const steps = lesson.steps.length;
  const exercises = (lesson.exercises || []).length;
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  if (!place.exercise) {
    return exercises > 0 ? `Step ${place.k + 1} of ${steps} (then ${plural(exercises, 'exercise', 'exercises')})` : `Step ${place.k + 1} of ${steps}`;
  }
  return steps > 0 ? `Exercise ${place.k + 1} of ${exercises} (after ${plural(steps, 'step', 'steps')})` : `Exercise ${place.k + 1} of ${exercises}`;
}

/** The place an address names: a step or an exercise by its id, or the lesson's first place. */
function placeOf(lesson, id) {
  const exercises = lesson.exercises || [];
  if (id == null) return lesson.steps.length ? { k: 0, exercise: false } : exercises.length ? { k: 0, exercise: true } : null;
  const s = lesson.steps.findIndex((x) => x.id === id);
  if (s >= 0) return { k: s, exercise: false };
  const e = exercises.findIndex((x) => x.id === id);
  return e >= 0 ? { k: e, exercise: true } : null;
}

/**
 * The texts of the course's files fetched here, under the names the live view asks for them
 * by (web::fetch_text takes each once): the index and the lesson's file are not brought twice.
 */
const kept = (globalThis.__lockstepFetched ??= {});

async function fetched(url, as, keep) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  const text = await response.text();
  if (keep) kept[keep] = text;
  return as === 'json' ? JSON.parse(text) : text;
}

/**
 * Shows the place `placeId` (a step or an exercise; the first place when null) of the shipped
 * lesson `lessonId` while the simulator loads; `at` makes a file's address and `hash` is the
 * address the loader read. Resolves to whether it is shown.
 */
export async function show(lessonId, placeId, at, hash) {
  // Offline, the simulator is at hand or nowhere, and the picture is not (the offline copy
  // keeps none).
  if (!navigator.onLine || replaced(lessonId)) return false;
  // A place named by the address whose run is the learner's own needs no file to know it.
  if (placeId != null && (resumes(lessonId, placeId, false) || resumes(lessonId, placeId, true))) return false;
  const [index, folder] = await Promise.all([
    fetched(at('./course/index.json'), 'json', 'course/index.json'),
    fetched(at('./lessons/index.json'), 'json').catch(() => ({ lessons: [] })),
  ]);
  if (Array.isArray(folder.lessons) && folder.lessons.length > 0) return false;
  // A lesson that is not a shipped one (from a pack, or opened) has no file here.
  if (!Array.isArray(index.lessons) || !index.lessons.includes(lessonId)) return false;
  const file = await fetched(at(`./course/${lessonId}.json`), 'json', `course/${lessonId}.json`);
  const lesson = file && file.version === WIRE_VERSION ? file.lesson : null;
  if (!lesson || lesson.id !== lessonId) return false;
  const place = placeOf(lesson, placeId);
  if (!place) return false;
  const it = place.exercise ? lesson.exercises[place.k] : lesson.steps[place.k];
  if (resumes(lessonId, it.id, place.exercise)) return false;
  // A step that asks a prediction has no picture: its run is the answer, shown once the
  // learner has committed (ui::course::place_pictures).
  const asks = !place.exercise && Boolean(it.prediction);
  let svg = null;
  if (!asks) {
    const doc = new DOMParser().parseFromString(await fetched(at(`./course/${lessonId}.${it.id}.run.svg`)), 'image/svg+xml');
    svg = doc.documentElement;
    if (svg.nodeName !== 'svg' || doc.getElementsByTagName('parsererror').length > 0) return false;
  }
  // The address may have changed while the files came: the live view shows that one.
  if (location.hash !== hash) return false;

  const link = (href, ...words) => {
    const a = el('a', '', ...words);
    a.href = href;
    return a;
  };
  const text = el('section', 'lesson-text');
  text.append(
    el('p', 'crumbs', link('#/lessons', 'Lessons'), ' \u203a ', link(`#/lessons/${lesson.id}`, ...rich(lesson, lesson.title))),
    el('p', 'where', where(lesson, place)),
    el('h2', '', ...rich(lesson, it.title)),
  );
  const narration = el('div', 'preview-narration');
  const first = place.k === 0 && (!place.exercise || lesson.steps.length === 0);
  if (first && lesson.intro && lesson.intro.length) narration.append(el('div', 'intro', ...blocks(lesson.intro)));
  if (place.exercise) {
    // The goal and its narration; the checks, hints and the learner's name come live.
    narration.append(el('section', 'exercise', el('h3', '', 'Goal'), el('p', 'goal', ...rich(lesson, it.goal)), el('div', 'narration', ...blocks(it.narration))));
  } else {
    if (it.assumptions && it.assumptions.length) {
      const p = el('p', 'assumptions', el('strong', '', 'Assuming '));
      it.assumptions.forEach((a, i) => p.append(i > 0 ? '; ' : '', ...rich(lesson, a)));
      p.append('.');
      narration.append(p);
    }
    narration.append(el('div', 'narration', ...blocks(it.narration)));
    if (it.prediction) {
      narration.append(el('section', 'predict', el('h3', '', 'Before you play it'), el('p', '', ...rich(lesson, it.prediction.question))));
    }
  }
  text.append(narration);

  let stage;
  if (svg) {
    const picture = document.importNode(svg, true);
    picture.removeAttribute('width');
    picture.removeAttribute('height');
    picture.setAttribute('class', 'preview-picture');
    stage = el('section', 'stage lesson-run', picture,
      el('p', 'hint', 'The run as the course drew it. Its controls, playback and details come with the simulator.'));
  } else {
    stage = el('section', 'stage lesson-run',
      el('p', 'hint watched', 'The run plays once you have answered the question beside it.'));
  }
  stage.setAttribute('aria-label', 'The run');

  // The page's header as the live view draws it (web::header), so that nothing moves when the
  // live view takes over.
  const nav = el('ul', '', ...[['#/lessons', 'Lessons'], ['#/sandbox', 'Sandbox'], ['#/facilitator', 'Facilitator']].map(([href, label]) => {
    const a = link(href, label);
    if (label === 'Lessons') a.setAttribute('aria-current', 'page');
    return el('li', '', a);
  }));
  const views = el('nav', 'views', nav);
  views.setAttribute('aria-label', 'Views');
  // The theme list and the presenter switch (web::display) take their room, unseen and out of
  // reach, until the live header brings them.
  const select = el('select', '', ...['Follow the system', 'Light', 'Dark'].map((w) => el('option', '', w)));
  const display = el('div', 'display-controls', el('label', '', 'Theme'), select, el('button', '', 'Presenter mode'));
  display.setAttribute('aria-hidden', 'true');
  display.inert = true;
  const header = el('header', 'top', el('h1', '', 'Lockstep'), el('p', 'tagline', 'Two lock services, each correct, do not make one lock.'), views, display);
  const main = el('main', 'lesson-page', text, stage);
  const preview = el('div', 'preview', header, main);
  preview.id = 'preview';
  const root = document.documentElement;
  // The reader's theme and presenter mode, as the live view sets them (web::display), so that
  // the page does not change its look when the live view takes over.
  const look = (stored(DISPLAY_KEY) || '').split(/\s+/);
  if (look[0] === 'light' || look[0] === 'dark') root.dataset.theme = look[0];
  if (look.includes('presenter')) root.dataset.presenter = 'true';
  root.dataset.preview = 'shown';
  // The tab's title as the live place sets it.
  document.title = `${plain(lesson, it.title)} \u00b7 ${plain(lesson, lesson.title)} \u00b7 Lockstep`;
  document.body.append(preview);

  // The live view takes the preview's place once it draws a view of its own; another address
  // drops it at once.
  const done = () => {
    // A reader on one of the preview's links goes on from the live place's title.
    const focused = preview.contains(document.activeElement);
    preview.remove();
    if (focused) document.getElementById('view-title')?.focus();
    delete root.dataset.preview;
    watch.disconnect();
    removeEventListener('hashchange', done);
  };
  const live = () => {
    const m = document.querySelector('#course-app > main');
    return Boolean(m && !m.querySelector(':scope > .loading'));
  };
  const watch = new MutationObserver(() => {
    if (live()) done();
  });
  watch.observe(document.body, { childList: true, subtree: true });
  addEventListener('hashchange', done);
  if (live()) done();
  return true;
}
