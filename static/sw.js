// The site's offline copy. On the first visit it caches every file of the build (the bundles,
// the workers started on demand, the lessons, the style sheet; not the previews a lesson's
// place shows while its simulator loads, which a page drawn from here never needs) and the
// folder of lessons served beside the site, so that a reload with the network off opens the
// same site: a workshop room with bad Wi-Fi needs one good visit per browser.
//
// The build writes VERSION (a hash of every file's contents) and FILES (every file's name but
// those site.json's `offline` skips) on the two lines below; a new build is a new service
// worker with a new cache, and the old cache is dropped once it takes over.
const VERSION = 'unbuilt';
const FILES = [];

// The folder of lessons and its bound, as the page reads them (site.json's `offline`, written
// here by the build, as the two lines above).
const FOLDER_INDEX = 'unbuilt';
const FOLDER_LESSONS_MAX = 0;
const CACHE = `lockstep-${VERSION}`;
const PLAIN_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.md$/;

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      await cache.addAll(['./', ...FILES.filter((f) => !f.startsWith('./lessons/'))]);
      await cacheFolder(cache);
      await self.skipWaiting();
    })(),
  );
});

// The folder of lessons beside the site, when there is one; a site without it is complete.
async function cacheFolder(cache) {
  try {
    const response = await fetch(FOLDER_INDEX, { cache: 'no-cache' });
    if (!response.ok) return;
    const index = await response.clone().json();
    await cache.put(FOLDER_INDEX, response);
    const names = Array.isArray(index.lessons) ? index.lessons.slice(0, FOLDER_LESSONS_MAX) : [];
    await cache.addAll(names.filter((n) => typeof n === 'string' && PLAIN_NAME.test(n)).map((n) => `lessons/${n}`));
  } catch (e) {
    // The folder is read again, online, by the page itself; offline it is what was cached.
    console.warn('lockstep offline copy: the folder of lessons was not cached', e);
  }
}

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) {
        if (key.startsWith('lockstep-') && key !== CACHE) await caches.delete(key);
      }
      await self.clients.claim();
    })(),
  );
});

// The folder of lessons is the facilitator's, not the build's: it is read from the network
// first (below), so a changed lesson is seen at once.
const BUILT = new Set(
  ['./', ...FILES].filter((f) => !f.startsWith('./lessons/')).map((f) => new URL(f, self.registration.scope).href),
);

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  url.hash = '';
  url.search = '';
  if (BUILT.has(url.href)) {
    // The build's files (the page among them, whatever its query) change only with a new
    // build, which comes as a new worker: the cached copy is the right one, and the network
    // is asked only if it is missing.
    event.respondWith(caches.match(url.href).then((hit) => hit || fetch(request)));
    return;
  }
  if (/\.(md|json)$/.test(url.pathname)) {
    // Lesson files (the folder's, or one a link opens from this site): the network first, so a
    // facilitator's change is seen at once, and the last copy when the network is off.
    event.respondWith(
      fetch(request)
        .then(async (response) => {
          if (response.ok) {
            const cache = await caches.open(CACHE);
            await cache.put(url.href, response.clone());
          }
          return response;
        })
        .catch(async () => (await caches.match(url.href)) || Response.error()),
    );
  }
});
