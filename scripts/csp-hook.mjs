// Trunk post-build hook: moves the inline module script that Trunk writes into index.html (the
// one that loads the wasm) into a file of its own, so the page's Content Security Policy can
// forbid inline scripts altogether (script-src 'self'). Run by Trunk with TRUNK_STAGING_DIR set.
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
