// The files of the site, carried by the page itself (`lockstep lesson pack --single-file`), so
// that it runs from a file opened with no server and no network. A page opened from a file may
// fetch nothing beside it, import no module beside it and start no worker from beside it, so
// every request the site makes for one of its own files is answered from here: the page's
// fetches, the loader's imports (index.html reads `__lockstepInline`), its workers, its
// pictures and the rest of a split bundle.
(() => {
  'use strict';
  const carried = JSON.parse(document.getElementById('lockstep-files').textContent);
  const dir = new URL('./', location.href).href;
  const files = new Map();
  // Each file is stored compressed (deflate) and in base64; all are inflated before the
  // loader starts, so that a synchronous reader (the split's) finds them at hand.
  const inflate = async (b64) => {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  };
  const ready = Promise.all(Object.entries(carried).map(async ([name, b64]) => files.set(name, await inflate(b64))));

  // The name of a carried file an address points to, or null when it points outside the site;
  // a file of the site that is not carried is `undefined` (answered as a server would: 404).
  const nameOf = (address, base) => {
    let url;
    try {
      url = new URL(address, base || document.baseURI);
    } catch {
      return null;
    }
    url.hash = '';
    url.search = '';
    if (!url.href.startsWith(dir)) return null;
    const name = decodeURIComponent(url.href.slice(dir.length));
    return Object.hasOwn(carried, name) ? name : undefined;
  };
  const TYPES = { js: 'text/javascript', wasm: 'application/wasm', json: 'application/json', svg: 'image/svg+xml', css: 'text/css', md: 'text/markdown', html: 'text/html' };
  const typeOf = (name) => TYPES[name.split('.').pop()] || 'application/octet-stream';
  const blobs = new Map();
  const blobOf = (name) => {
    if (!blobs.has(name)) blobs.set(name, URL.createObjectURL(new Blob([files.get(name)], { type: typeOf(name) })));
    return blobs.get(name);
  };

  // A module's address: its text with `import.meta.url` made the address it would have beside
  // the page, and every module it imports from the site replaced by that module's own address.
  const modules = new Map();
  const moduleOf = (name) => {
    if (!modules.has(name)) {
      const at = dir + name;
      const text = new TextDecoder()
        .decode(files.get(name))
        .replace(/import\.meta\.url/g, JSON.stringify(at))
        .replace(/(\bfrom\s*|\bimport\s*)(["'])(\.{1,2}\/[^"']+)\2/g, (all, keyword, _quote, spec) => {
          const imported = nameOf(spec, at);
          return typeof imported === 'string' ? keyword + JSON.stringify(moduleOf(imported)) : all;
        });
      modules.set(name, URL.createObjectURL(new Blob([text], { type: 'text/javascript' })));
    }
    return modules.get(name);
  };

  const notCarried = (name) => new Response(`${name} is not part of this file`, { status: 404, headers: { 'content-type': 'text/plain' } });
  const netFetch = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const name = nameOf(input instanceof Request ? input.url : input);
    if (name === null) return netFetch(input, init);
    if (name === undefined) return Promise.resolve(notCarried(String(input)));
    return ready.then(() => new Response(files.get(name), { headers: { 'content-type': typeOf(name) } }));
  };

  // A page opened from a file may start a classic worker from a blob but no module worker
  // (Chromium refuses them all there), and its worker has none of the page's answers. So a
  // worker of the site (Trunk's NAME_loader.js, which imports NAME.js and starts NAME_bg.wasm)
  // becomes one classic script: the bundle's code, its exports made plain names, and its wasm
  // carried in the script and started at once.
  const workers = new Map();
  const classicWorker = (bundle) => {
    if (!workers.has(bundle)) {
      const glue = new TextDecoder().decode(files.get(`${bundle}.js`));
      // The function the loader would call: the module's default export.
      const init = /\bexport\s*\{[^}]*?\b([\w$]+)\s+as\s+default\b/.exec(glue);
      if (!init) throw new Error(`the worker ${bundle} has no default export to start it with`);
      const code = glue
        .replace(/import\.meta\.url/g, JSON.stringify(dir + `${bundle}.js`))
        .replace(/\bexport\s*\{[^}]*\};?/g, '')
        .replace(/\bexport\s+(?=(async\s+)?function\b|const\b|let\b|var\b|class\b)/g, '');
      if (/\bimport\b\s*[\w{*]/.test(code.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g, ''))) {
        throw new Error(`the worker ${bundle} imports other modules, which a single file cannot start`);
      }
      const start =
        `\n(async () => { const bin = atob(${JSON.stringify(carried[`${bundle}_bg.wasm`])}); const packed = new Uint8Array(bin.length);` +
        ' for (let i = 0; i < bin.length; i++) packed[i] = bin.charCodeAt(i);' +
        " const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream('deflate-raw'));" +
        ` await ${init[1]}({ module_or_path: new Uint8Array(await new Response(stream).arrayBuffer()) }); })();\n`;
      workers.set(bundle, URL.createObjectURL(new Blob([code, start], { type: 'text/javascript' })));
    }
    return workers.get(bundle);
  };
  const NativeWorker = window.Worker;
  window.Worker = class extends NativeWorker {
    constructor(address, options) {
      const name = nameOf(address);
      const bundle = typeof name === 'string' && /^([A-Za-z0-9_-]+)_loader\.js$/.exec(name);
      if (bundle && Object.hasOwn(carried, `${bundle[1]}.js`) && Object.hasOwn(carried, `${bundle[1]}_bg.wasm`)) {
        super(classicWorker(bundle[1]), { ...options, type: 'classic' });
      } else {
        super(address, options);
      }
    }
  };

  // Pictures the page shows from the site's files (a step's picture, a sweep's plot).
  const picture = (img) => {
    const src = img.getAttribute('src');
    if (!src || src.startsWith('blob:') || src.startsWith('data:')) return;
    const name = nameOf(src);
    if (typeof name === 'string') img.src = blobOf(name);
  };
  ready.then(() => {
    document.querySelectorAll('img[src]').forEach(picture);
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === 'attributes' && r.target instanceof HTMLImageElement) picture(r.target);
        for (const n of r.addedNodes || []) {
          if (n instanceof HTMLImageElement) picture(n);
          else if (n instanceof Element) n.querySelectorAll('img[src]').forEach(picture);
        }
      }
    }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['src'] });
  });

  globalThis.__lockstepInline = {
    ready,
    /** The module of a carried script, imported. */
    import: async (address) => {
      await ready;
      const name = nameOf(address);
      if (typeof name !== 'string') throw new Error(`${address} is not part of this file`);
      return import(moduleOf(name));
    },
    /** The bytes of a carried file, at once (undefined when it is not carried or not yet inflated). */
    bytes: (address) => {
      const name = nameOf(address);
      return typeof name === 'string' ? files.get(name) : undefined;
    },
  };
})();
