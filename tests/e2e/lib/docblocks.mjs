// The code blocks of docs/embedding.md, read as Markdown reads them, so that the tests and
// scripts/hosts.sh run the recipes as the page writes them, with only the example addresses
// replaced by local ones.
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './cli.mjs';

export const DOC = path.join(ROOT, 'docs', 'embedding.md');

/** The body of the first code block of `lang` after the text `after`. */
export function block(lang, after) {
  const page = fs.readFileSync(DOC, 'utf8');
  const from = page.indexOf(after);
  if (from < 0) throw new Error(`docs/embedding.md has no "${after}"`);
  // A fence is three backticks or more (four around a block that shows a fenced block); a
  // block inside a list item is indented, its closing fence too, and its lines lose the
  // indentation, as Markdown reads them.
  const fence = new RegExp('^( *)(`{3,})' + lang + '\n', 'mg');
  fence.lastIndex = from;
  const open = fence.exec(page);
  if (!open) throw new Error(`docs/embedding.md has no ${lang} block after "${after}"`);
  const [, indent, ticks] = open;
  const start = open.index + open[0].length;
  const close = new RegExp('^' + indent + ticks + '$', 'mg');
  close.lastIndex = start;
  const end = close.exec(page);
  if (!end) throw new Error(`the ${lang} block after "${after}" is not closed`);
  return page
    .slice(start, end.index - 1)
    .split('\n')
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n');
}

/**
 * The docs' example addresses replaced: `app` (the site's address, ending in /) for
 * https://example.org/lockstep/, `host` (an origin) for https://docs.example.org.
 */
export function localise(text, app, host) {
  const appOrigin = new URL(app).origin;
  return text
    .replaceAll('https://example.org/lockstep/', app)
    .replaceAll(encodeURIComponent('https://docs.example.org'), encodeURIComponent(host))
    .replaceAll('https://docs.example.org', host)
    .replaceAll("'https://example.org'", `'${appOrigin}'`);
}
