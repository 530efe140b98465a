// Lays out an mdBook book and the pages of a Docusaurus site from the recipes of
// docs/embedding.md (its code blocks as they are written, with the example addresses replaced
// by loopback ones), for scripts/hosts.sh to build with the real tools.
//
//   node scripts/hosts-recipes.mjs BOOK_DIR DOCUSAURUS_SITE_DIR
//
// Each host and the Lockstep site it embeds get a loopback port of their own, free when this
// runs: the hosts bake these addresses in (the embeds' origins, the site's address), so
// tests/e2e/specs/real_hosts.mjs serves them on the same ports, read from
// target/hosts/ports.json.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { block, localise } from '../tests/e2e/lib/docblocks.mjs';
import { ROOT } from '../tests/e2e/lib/cli.mjs';

export const PORTS_FILE = path.join(ROOT, 'target', 'hosts', 'ports.json');

/** `n` ports free on 127.0.0.1 now, all different. */
async function freePorts(n) {
  const servers = [];
  for (let i = 0; i < n; i++) {
    const s = net.createServer();
    await new Promise((resolve, reject) => {
      s.once('error', reject);
      s.listen(0, '127.0.0.1', resolve);
    });
    servers.push(s);
  }
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

const [bookDir, siteDir] = process.argv.slice(2);
if (!bookDir || !siteDir) {
  console.error('usage: node scripts/hosts-recipes.mjs BOOK_DIR DOCUSAURUS_SITE_DIR');
  process.exit(2);
}

const [book, bookApp, docusaurus, docusaurusApp] = await freePorts(4);
const at = (port) => `http://127.0.0.1:${port}`;
const ports = { book, bookApp, docusaurus, docusaurusApp };

// mdBook: the preprocessor's book.toml and block, the theme recipe's book.toml and script, and
// a chapter with the pasted snippet ("mdBook, by hand").
{
  const app = `${at(bookApp)}/`;
  const host = at(book);
  const mine = (text) => localise(text, app, host);
  const preprocessor = mine(block('toml', '**mdBook, with the scenario kept as source**'));
  const theme = block('toml', "**mdBook, following the book's theme**");
  write(
    path.join(bookDir, 'book.toml'),
    `[book]\ntitle = "Locks, live"\nlanguage = "en"\nsrc = "src"\n\n${preprocessor}\n\n${theme}\n`,
  );
  write(path.join(bookDir, 'lockstep-theme.js'), mine(block('js', "**mdBook, following the book's theme**")) + '\n');
  // The Markdown block holds the lockstep block with its fences.
  const chapter = mine(block('markdown', '**mdBook, with the scenario kept as source**'));
  write(path.join(bookDir, 'src', 'fencing.md'), `# Fencing\n\nA paused client and the token that refuses its write.\n\n${chapter}\n`);
  const snippet = mine(block('html', '## Embedding'));
  write(path.join(bookDir, 'src', 'pasted.md'), `# Pasted\n\nThe share panel's snippet, pasted.\n\n${snippet}\n`);
  write(path.join(bookDir, 'src', 'SUMMARY.md'), '# Summary\n\n- [Fencing](fencing.md)\n- [Pasted](pasted.md)\n');
}

// Docusaurus: the component and a doc page that uses it, in the classic template's site.
{
  const app = `${at(docusaurusApp)}/`;
  const host = at(docusaurus);
  const mine = (text) => localise(text, app, host);
  write(path.join(siteDir, 'src', 'components', 'Lockstep.js'), mine(block('jsx', '**Docusaurus (MDX)**')) + '\n');
  const use = mine(block('mdx', '**Docusaurus (MDX)**'));
  write(path.join(siteDir, 'docs', 'fencing.mdx'), `# Fencing\n\n${use}\n`);
}

write(PORTS_FILE, JSON.stringify(ports, null, 2) + '\n');
console.log(`[hosts] recipes laid out; ports ${JSON.stringify(ports)}`);
