// Trunk post-build hook. It moves the inline module script that Trunk writes into index.html (the
// one that loads the wasm) into a file of its own, so the page's Content Security Policy can
// forbid inline scripts altogether (script-src 'self'), and writes the offline copy's list of files
// into the service worker (below). Run by Trunk with TRUNK_STAGING_DIR set.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) {
  console.error('csp-hook: TRUNK_STAGING_DIR is not set; run it from Trunk');
  process.exit(1);
}
const file = path.join(dir, 'index.html');
const html = fs.readFileSync(file, 'utf8');
const inline = /<script type=("module"|module)>([\s\S]*?)<\/script>/g;
let count = 0;
const out = html.replace(inline, (_, _type, body) => {
  count += 1;
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 16);
  const name = `loader-${hash}.js`;
  fs.writeFileSync(path.join(dir, name), body);
  return `<script type="module" src="./${name}"></script>`;
});
if (count !== 1) {
  console.error(`csp-hook: expected one inline module script in index.html, found ${count}`);
  process.exit(1);
}
fs.writeFileSync(file, out);

// The offline copy: the service worker (static/sw.js) caches every file of the build when the
// page is first visited, so the whole site (the workers started on demand included) loads
// again with the network off. Its list of files and its version, a hash of every file's
// contents, are written into it here, so a new build installs a new copy and drops the old.
const sw = path.join(dir, 'sw.js');
if (!fs.existsSync(sw)) {
  console.error('csp-hook: sw.js is missing from the build (index.html copies static/sw.js)');
  process.exit(1);
}
const files = [];
const walk = (sub) => {
  for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
    const rel = sub ? `${sub}/${entry.name}` : entry.name;
    if (entry.isDirectory()) walk(rel);
    else if (rel !== 'sw.js') files.push(rel);
  }
};
walk('');
files.sort();
const version = crypto.createHash('sha256');
for (const f of files) version.update(f).update('\0').update(fs.readFileSync(path.join(dir, f)));
const template = fs.readFileSync(sw, 'utf8');
const filled = template
  .replace(/^const VERSION = .*;$/m, `const VERSION = '${version.digest('hex').slice(0, 16)}';`)
  .replace(/^const FILES = .*;$/m, `const FILES = ${JSON.stringify(files.map((f) => `./${f}`))};`);
if (filled === template) {
  console.error('csp-hook: sw.js has no VERSION and FILES lines to fill in');
  process.exit(1);
}
fs.writeFileSync(sw, filled);
