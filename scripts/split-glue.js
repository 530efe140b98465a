
// The rest of this bundle's code (src/bin/split.rs). scripts/csp-hook.mjs appends this to the
// bundle's wasm-bindgen script and names the secondary module below. The primary's moved
// functions are placeholders in its function table; the first call of one loads the rest at
// once if `splitRest` has not already brought it, and from then on every call goes straight
// to the real function. Loading at once blocks the page for a moment, so the loader calls
// `splitRest` as soon as the view is up and a reader rarely meets it.
const __splitUrl = __SPLIT_SECONDARY__ ? new URL(__SPLIT_SECONDARY__, import.meta.url) : undefined;
let __splitModule;
let __splitLoaded = false;
let __splitImports;
const __splitState = (globalThis.__lockstepSplit = globalThis.__lockstepSplit || { syncLoads: 0, loaded: false });
function __splitInstantiate(module) {
  if (__splitLoaded) return;
  new WebAssembly.Instance(module, { ...__splitImports, __split_primary: wasm });
  __splitLoaded = true;
  __splitState.loaded = true;
}
// The page cannot go on without the code it called: it says so where the reader looks, and a
// reload (the work is saved as it changes) starts again.
function __splitFailed(why) {
  // The page's loader may say it its own way (an embed shows the link to its run and tells its
  // host); the note below is for every other view.
  const said = typeof globalThis.__lockstepSplitFailed === 'function' && globalThis.__lockstepSplitFailed(`the rest of its code could not be loaded: ${why}`);
  if (!said && typeof document !== 'undefined' && document.body && !document.getElementById('split-failed')) {
    const note = document.createElement('p');
    note.id = 'split-failed';
    note.className = 'site-updated';
    note.setAttribute('role', 'alert');
    note.textContent = `Part of this page's code could not be loaded (${why}). Reload the page to go on.`;
    document.body.prepend(note);
  }
  return new Error(`the rest of its code could not be loaded: ${why}`);
}
function __splitNow() {
  if (__splitLoaded) return;
  // A page that carries its files (`lockstep lesson pack --single-file`) has the rest at hand.
  const carried = !__splitModule && globalThis.__lockstepInline && globalThis.__lockstepInline.bytes(__splitUrl.href);
  if (carried) __splitModule = new WebAssembly.Module(carried);
  if (!__splitModule) {
    // A synchronous request can only return text in a page: read it as bytes.
    const x = new XMLHttpRequest();
    x.open('GET', __splitUrl, false);
    x.overrideMimeType('text/plain; charset=x-user-defined');
    try {
      x.send();
    } catch (e) {
      throw __splitFailed(e && e.name === 'NetworkError' ? 'the network is out of reach' : String(e));
    }
    if (x.status !== 200) throw __splitFailed(`status ${x.status}`);
    const t = x.responseText;
    const b = new Uint8Array(t.length);
    for (let i = 0; i < t.length; i++) b[i] = t.charCodeAt(i) & 255;
    __splitModule = new WebAssembly.Module(b);
  }
  __splitState.syncLoads += 1;
  __splitInstantiate(__splitModule);
}
{
  const base = __wbg_get_imports;
  __wbg_get_imports = function () {
    const imports = base();
    __splitImports = imports;
    imports.__split_placeholder = new Proxy({}, {
      get: (_, slot) => function (...args) {
        if (!__splitLoaded) __splitState.firstSlot = Number(slot);
        __splitNow();
        return wasm.__split_table.get(Number(slot))(...args);
      },
    });
    // What an instrumented build reports (scripts/split-profile.mjs): each function's first run.
    imports.__split_profile = {
      hit: (f) => {
        (__splitState.hits = __splitState.hits || new Set()).add(f);
      },
    };
    return imports;
  };
}
/**
 * Fetches and compiles the rest of the bundle's code without starting it, once: a call that
 * needs it later then starts it on the spot with no request. The loader calls it before the
 * bundle starts where the rest is at hand (the offline copy, a page already up), since a
 * synchronous request can be answered by neither the offline copy nor a network that is down.
 */
export async function splitFetch() {
  if (__splitModule || !__splitUrl) return;
  const response = await fetch(__splitUrl);
  if (!response.ok) throw Object.assign(new Error(`the rest of its code could not be loaded: status ${response.status}`), { status: response.status });
  const module = await WebAssembly.compile(await response.arrayBuffer());
  __splitModule = __splitModule || module;
}
/** Fetches and starts the rest of the bundle's code, once; the loader calls it when the view is up. */
export async function splitRest() {
  if (__splitLoaded || !__splitUrl) return;
  await splitFetch();
  __splitInstantiate(__splitModule);
}
