// Waiting until a page has nothing left to do by itself, for a test that asserts that something
// did not happen (no request outside a path, no code loaded on the spot): instead of a pause of
// a guessed length, the page's own requests and its task queue say when it is done.
import { until, AssertionError, STEP_TIMEOUT } from './harness.mjs';

/**
 * Follows the requests of `page` (every frame of it) from now on. `quiet()` then waits until
 * none is in flight and the page has had an idle moment (`requestIdleCallback`, which the browser
 * runs only when the page has no other task waiting) without starting another. Every answer the page
 * received has then been handled, and whatever that handling asked for has been answered too.
 * What a page would do later by a timer of its own is not covered: wait for that by its own
 * event.
 */
export function watchRequests(page) {
  const inFlight = new Set();
  let started = 0;
  page.on('request', (r) => {
    inFlight.add(r);
    started += 1;
  });
  page.on('requestfinished', (r) => inFlight.delete(r));
  page.on('requestfailed', (r) => inFlight.delete(r));
  return {
    /** Waits until the page is quiet (see above); `where` is the frame to ask for an idle moment. */
    async quiet(where = page, what = 'the page to have no request in flight and nothing queued') {
      const deadline = Date.now() + STEP_TIMEOUT;
      for (;;) {
        await until(() => inFlight.size === 0, what, Math.max(1, deadline - Date.now()));
        const before = started;
        await where.evaluate(() => new Promise((resolve) => requestIdleCallback(() => resolve())));
        if (started === before && inFlight.size === 0) return;
        if (Date.now() > deadline) throw new AssertionError(`timed out waiting for ${what}: requests kept starting`);
      }
    },
  };
}
