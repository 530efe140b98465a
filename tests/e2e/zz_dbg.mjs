import { chromium } from 'playwright-core';
import { serveDir } from './lib/server.mjs';
const server = await serveDir('dist');
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox','--disable-gpu','--disable-background-networking'] });
const ctx = await b.newContext();
const p = await ctx.newPage();
p.on('pageerror', e => console.log('PAGEERROR', e.message, e.stack.split('\n').slice(0,6).join(' | ')));
p.on('console', m => console.log('CONSOLE', m.type(), m.text().slice(0,300)));
p.on('request', r => { if (r.url().includes('rest')) console.log('REQ', r.url()); });
await p.goto(server.url + process.argv[2]);
await p.waitForTimeout(4000);
console.log(await p.evaluate(() => JSON.stringify({ready: document.documentElement.dataset.ready, split: globalThis.__lockstepSplit && {...globalThis.__lockstepSplit, hits: undefined}})));
if (process.argv[3] === 'reload') { await p.reload(); await p.waitForTimeout(4000); console.log(await p.evaluate(() => JSON.stringify({ready: document.documentElement.dataset.ready, split: {...globalThis.__lockstepSplit}}))); }
await b.close(); await server.close();
