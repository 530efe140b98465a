// A place of a lesson (a step or an exercise) as the course drew it, shown while its simulator
// loads: its title, narration and a picture of its run, written as HTML by the engine when the
// course's files were written (course/LESSON.PLACE.html; ui::preview). A reader on a slow line
// reads the step from a few small files and plays it once the simulator has arrived. This file
// only decides whether to show it, and renders nothing of a lesson itself.
//
// The picture is the run the live place opens with, so a preview is shown only where the live
// place will show that run: a shipped lesson's place, not a step whose goal the learner met
// before or an exercise they changed (the live place resumes their own run), and not while a
// lesson from the folder beside the site or one the learner opened might replace a shipped one.
// What to read of the learner's storage to know that comes with the course's files too
// (course/previews.json: ui::preview::previews_index). The preview shows no control: nothing
// on it acts on the run before the simulator can answer (its links go to other addresses,
// which drop it). The live view takes its place as soon as it draws anything but a loading
// note.

function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

/** Whether the live place would show a run of the learner's own rather than its own. */
function resumes(index, lesson, place) {
  try {
    const progress = JSON.parse(stored(index.keys.progress) || 'null');
    const mine = progress && progress.lessons && progress.lessons[lesson];
    return index.ownRun.some((member) => Boolean(mine && mine[member] && Object.prototype.hasOwnProperty.call(mine[member], place)));
  } catch {
    // Unreadable progress counts as none in the page too.
    return false;
  }
}

/** Whether the learner opened a lesson file with this id, which replaces the shipped lesson. */
function replaced(index, lesson) {
  try {
    const opened = JSON.parse(stored(index.keys.opened) || 'null');
    return Boolean(opened && Array.isArray(opened.files) && opened.files.some((f) => f && f.id === lesson));
  } catch {
    return false;
  }
}

async function fetched(url, as) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  const text = await response.text();
  return as === 'json' ? JSON.parse(text) : text;
}

/**
 * Shows the place `placeId` (a step or an exercise; the first place when null) of the shipped
 * lesson `lessonId` while the simulator loads; `at` makes a file's address and `hash` is the
 * address the loader read. Resolves to whether it is shown.
 */
export async function show(lessonId, placeId, at, hash) {
  // Offline, the simulator is at hand or nowhere, and the preview is not (the offline copy
  // keeps none).
  if (!navigator.onLine) return false;
  const [index, folder] = await Promise.all([
    fetched(at('./course/previews.json'), 'json'),
    fetched(at('./lessons/index.json'), 'json').catch(() => ({ lessons: [] })),
  ]);
  if (Array.isArray(folder.lessons) && folder.lessons.length > 0) return false;
  // A lesson that is not a shipped one (from a pack, or opened) has no preview here.
  const places = index.lessons && Object.prototype.hasOwnProperty.call(index.lessons, lessonId) ? index.lessons[lessonId] : null;
  if (!Array.isArray(places) || replaced(index, lessonId)) return false;
  const place = placeId ?? places[0];
  if (!places.includes(place) || resumes(index, lessonId, place)) return false;
  const doc = new DOMParser().parseFromString(await fetched(at(`./course/${lessonId}.${place}.html`), 'text'), 'text/html');
  const preview = doc.getElementById('preview');
  if (!preview) return false;
  // The address may have changed while the files came: the live view shows that one.
  if (location.hash !== hash) return false;
  const root = document.documentElement;
  // The reader's theme and presenter mode, as the live view sets them (web::display), so that
  // the page does not change its look when the live view takes over.
  const look = (stored(index.keys.display) || '').split(/\s+/);
  if (look[0] === 'light' || look[0] === 'dark') root.dataset.theme = look[0];
  if (look.includes('presenter')) root.dataset.presenter = 'true';
  root.dataset.preview = 'shown';
  // The tab's title as the live place sets it.
  document.title = preview.dataset.title;
  document.body.append(document.adoptNode(preview));
  // The live place reads its shipped lesson's file first. Asked for once the preview is on the
  // page (so as not to slow it) and before the bundle is, it has arrived by the time the bundle
  // asks, which then takes it from this preload, as it takes the course's index from the
  // loader's. The script only asks for it; it never reads it.
  const preload = document.createElement('link');
  preload.rel = 'preload';
  preload.as = 'fetch';
  preload.crossOrigin = 'anonymous';
  preload.href = at(`./course/${lessonId}.json`);
  document.head.append(preload);

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
