// Trunk pre-build hook: the site's bundles are built with the settings in scripts/site-env.sh
// (the standard library compiled for size, panics without messages, under target/site), and
// the split profiles (scripts/split/) were recorded for that build. A plain `trunk build` or
// `trunk serve` in a shell without them would compile other code, which the profiles no longer
// match: every first view would then stop the page to load the rest of its code. So the build
// stops here and says how to run it, rather than giving a different site.
//
// It also says when the compiler is not the one the profiles were recorded with
// (scripts/split/rustc.txt, written by scripts/split-profile.mjs): that build works, only slower
// on a first view, until the profiles are recorded again.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each `export NAME=VALUE` of site-env.sh, with `${ROOT...}` made this checkout's root. */
export function siteSettings(root = ROOT) {
  const text = fs.readFileSync(path.join(root, 'scripts', 'site-env.sh'), 'utf8');
  const settings = {};
  for (const m of text.matchAll(/^export ([A-Z0-9_]+)=(.*)$/gm)) {
    let value = m[2].trim();
    if (/^".*"$/.test(value)) value = value.slice(1, -1);
    settings[m[1]] = value.replace(/\$\{ROOT[^}]*\}/g, root);
  }
  return settings;
}

function main() {
  const wanted = siteSettings();
  const wrong = Object.entries(wanted).filter(([name, value]) => {
    const have = process.env[name];
    if (name === 'CARGO_TARGET_DIR') return !have || path.resolve(have) !== path.resolve(value);
    return have !== value;
  });
  if (wrong.length > 0) {
    console.error(
      [
        '',
        'This site is built with the settings in scripts/site-env.sh, which this shell does not have:',
        ...wrong.map(([name, value]) => `  ${name}=${value}   (here: ${process.env[name] ?? 'unset'})`),
        'Without them the bundles compile differently, the split profiles (scripts/split/) no longer',
        'match, and every first view would stop to load the rest of its code. Build it with:',
        '',
        '  source scripts/site-env.sh && trunk build --release     (or trunk serve)',
        '',
        'or ./scripts/serve.sh, which installs what is missing and serves it.',
        '',
      ].join('\n'),
    );
    process.exit(1);
  }
  const recorded = path.join(ROOT, 'scripts', 'split', 'rustc.txt');
  if (fs.existsSync(recorded)) {
    const then = fs.readFileSync(recorded, 'utf8').trim();
    let now = '';
    try {
      now = execFileSync('rustc', ['--version'], { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch (e) {
      now = `unknown (${e.message})`;
    }
    if (then !== now) {
      console.warn(
        `site-check: the split profiles were recorded with ${then}; this is ${now}. The site works, but ` +
          'a first view may load the rest of its code on the spot until they are recorded again: ' +
          'node scripts/split-profile.mjs (rust-toolchain.toml names the compiler they were recorded with).',
      );
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
