// The site's manifest (site.json) as the scripts read it, and what is made from it: the page's
// router, written into the loader by scripts/csp-hook.mjs. The Rust side of the same facts
// (ui::route, Cargo.toml's entries, index.html's bundles, the offline copy's bounds) is held
// equal to the manifest by tests/it/site.rs, which also runs the router made here against
// ui::route::Route::parse over every route.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The manifest, with each `@group` of a list spelled out. */
export function manifest(file = path.join(ROOT, 'site.json')) {
  const m = JSON.parse(fs.readFileSync(file, 'utf8'));
  const spell = (list) =>
    (list || []).flatMap((x) => {
      if (!x.startsWith('@')) return [x];
      if (!Array.isArray(m.groups[x])) throw new Error(`site.json: no group ${x}`);
      return m.groups[x];
    });
  for (const b of m.bundles) {
    b.mustNotLink = spell(b.mustNotLink);
    b.mustNotCarry = spell(b.mustNotCarry);
  }
  const names = new Set(m.bundles.map((b) => b.name));
  for (const r of m.router.routes) {
    for (const b of [r.bundle, r.tomlBundle].filter(Boolean)) {
      if (!names.has(b)) throw new Error(`site.json: route ${r.route} names no bundle "${b}"`);
    }
  }
  for (const v of m.views) {
    if (v.bundle && !names.has(v.bundle)) throw new Error(`site.json: view "${v.view}" names no bundle "${v.bundle}"`);
  }
  return m;
}

/** The bundle of that name. */
export function bundle(m, name) {
  return m.bundles.find((b) => b.name === name);
}

/**
 * The router's code: an expression whose value is a function from a fragment (`#/lessons/x`)
 * to `{ route, bundle, ids, copy, preview, preload, protocol }`: the route as ui::route names
 * it, the bundle the page starts, a lesson's and a place's ids, whether the page keeps an
 * offline copy there, whether a lesson's preview may stand in while the bundle comes, the files
 * the bundle asks for first, and the embed's host API version. Made from the manifest's table and `route` below, so that it can be
 * run here (the tests) as it runs in the page.
 */
export function routerSource(m) {
  const table = {
    max: m.router.hashCharsMax,
    id: m.router.id,
    toml: `${m.router.tomlField}=`,
    // Only what the router reads of each route.
    routes: m.router.routes.map(({ route, paths, bundle, tomlBundle, query, preview, keepsNoCopy }) => ({ route, paths, bundle, tomlBundle, query, preview, keepsNoCopy })),
    protocol: m.router.hostProtocol,
    preload: Object.fromEntries(m.bundles.filter((b) => b.preload).map((b) => [b.name, b.preload])),
  };
  return `(${route.toString()})(${JSON.stringify(table)})`;
}

/** The router's code as the page runs it: [`routerSource`] minified, as the rest of the loader is
 *  (Trunk minifies the loader before scripts/csp-hook.mjs writes the router into it). */
export function routerCode(m) {
  return transformSync(routerSource(m), { minify: true, loader: 'js' }).code.trim().replace(/;$/, '');
}

// The page's router, as ui::route::Route::parse reads a fragment; kept free of anything outside
// its argument, since its text is what the page runs.
function route(t) {
  const id = new RegExp(t.id);
  const named = (name) => t.routes.find((r) => r.route === name);
  const answer = (r, ids, query) => {
    const toml = Boolean(r.tomlBundle) && query.split('&').some((f) => f.startsWith(t.toml));
    const bundle = toml ? r.tomlBundle : r.bundle;
    return { route: r.route, bundle, ids, copy: !r.keepsNoCopy, preview: Boolean(r.preview), preload: t.preload[bundle] || [], protocol: t.protocol };
  };
  return (hash) => {
    const raw = hash.startsWith('#') ? hash.slice(1) : hash;
    const cut = raw.indexOf('?');
    const [p, query] = cut < 0 ? [raw, ''] : [raw.slice(0, cut), raw.slice(cut + 1)];
    if (hash.length > t.max) {
      // A link too long is still a link (its reader refuses it); nothing else that long is.
      const r = cut >= 0 && t.routes.find((x) => x.query && x.paths.includes(p));
      return r ? answer(r, [], query) : answer(named('NotFound'), [], '');
    }
    if (raw !== '' && !raw.startsWith('/')) return answer(named('Sandbox'), [], '');
    let path = p.startsWith('/') ? p.slice(1) : p;
    if (path.endsWith('/')) path = path.slice(0, -1);
    const segments = path === '' ? [] : path.split('/');
    for (const r of t.routes) {
      for (const pattern of r.paths) {
        const want = pattern === '' ? [] : pattern.slice(1).split('/');
        if (want.length !== segments.length) continue;
        const ids = [];
        const fits = want.every((w, i) => (w === ':id' ? id.test(segments[i]) && ids.push(segments[i]) : w === segments[i]));
        if (fits) return answer(r, ids, r.query ? query : '');
      }
    }
    return answer(named('NotFound'), [], '');
  };
}

/** The offline copy's rule: whether a file of the build (its path in dist/) is kept. */
export function keptOffline(m) {
  const skip = m.offline.skip.map((s) => new RegExp(s));
  return (file) => !skip.some((s) => s.test(file));
}

/**
 * index.html's `<link data-trunk rel="rust">` of each bundle, as the manifest says to build it:
 * the page's main bundle (which Trunk builds as the app), the bundles the loader starts (built
 * for the web, started by `__lockstepLoad`) and the workers (started by their own script, the
 * loader shim). All built with the size-first `web` profile and the manifest's wasm-opt settings.
 */
export function trunkLinks(m, indent = '    ') {
  return m.bundles
    .map((b) => {
      const kind = b.main ? '' : b.worker ? ' data-type="worker" data-bindgen-target="web" data-loader-shim' : ' data-type="worker" data-bindgen-target="web"';
      const params = b.split ? `${m.build.wasmOptParams} ${m.build.splitWasmOptParams}` : m.build.wasmOptParams;
      return `${indent}<link data-trunk rel="rust" data-bin="${b.name}"${kind} data-cargo-profile="web" data-wasm-opt="z" data-wasm-opt-params="${params}">`;
    })
    .join('\n');
}

/** The lines of index.html between which [`trunkLinks`] go. */
export const LINKS_BEGIN = '<!-- The bundles, as site.json says to build them (node scripts/site.mjs --write). -->';
export const LINKS_END = '<!-- End of the bundles. -->';

/** index.html with its bundles' links written from the manifest. */
export function withLinks(html, m) {
  const begin = html.indexOf(LINKS_BEGIN);
  const end = html.indexOf(LINKS_END);
  if (begin < 0 || end < begin) throw new Error(`index.html has no "${LINKS_BEGIN}" … "${LINKS_END}" block`);
  const indent = html.slice(html.lastIndexOf('\n', begin) + 1, begin);
  return `${html.slice(0, begin + LINKS_BEGIN.length)}\n${trunkLinks(m, indent)}\n${indent}${html.slice(end)}`;
}

// `node scripts/site.mjs --write` writes the bundles' links into index.html; `--check` says
// whether they are as the manifest says (exit 1 if not).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = path.join(ROOT, 'index.html');
  const html = fs.readFileSync(file, 'utf8');
  const written = withLinks(html, manifest());
  if (process.argv.includes('--write')) {
    fs.writeFileSync(file, written);
    console.log(written === html ? 'index.html: its bundles are as site.json says' : 'index.html: bundles written from site.json');
  } else if (written !== html) {
    console.error('index.html: its bundles differ from site.json (node scripts/site.mjs --write)');
    process.exit(1);
  } else {
    console.log('index.html: its bundles are as site.json says');
  }
}
