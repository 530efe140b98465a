// `lockstep room` with a room of twenty: each participant's page at an address that is not a
// secure context, as a room's network address is not (http://room.test:PORT/, a name Chromium
// maps to 127.0.0.1, so no traffic leaves the machine), joining with a name and reporting to the
// room; the facilitator's dashboard showing where each one is, live, and who looks stuck; a code
// handed in and verified; the room stopped and started again mid-session with nothing lost; and
// a request without the facilitator's key refused.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { assert, assertEqual, until, sleep, CHROMIUM, CHROMIUM_ARGS } from '../lib/harness.mjs';
import { ROOT, LOCKSTEP } from '../lib/cli.mjs';

const DRILL = path.join(ROOT, 'docs', 'examples', 'ledger-drill.md');
const DIST = process.env.E2E_DIST || path.join(ROOT, 'dist');
const PARTICIPANTS = 20;
const HOST = 'room.test';
const t0 = Date.now();
const say = (m) => process.env.E2E_ROOM_DEBUG && console.log(`[room ${Date.now() - t0} ms] ${m}`);

/** Starts `lockstep room` on loopback; resolves once it has printed its facilitator link. */
function startRoom(dir, port = 0) {
  const child = spawn(LOCKSTEP, ['room', dir, '--port', String(port), '--bind', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`lockstep room did not start: ${seen}`)), 15000);
    const read = (d) => {
      seen += d;
      const port = /give out: http:\/\/127\.0\.0\.1:(\d+)\//.exec(seen);
      const key = /\/room\/\?key=([0-9a-f]+)/.exec(seen);
      if (port && key) {
        clearTimeout(timer);
        resolve({
          port: Number(port[1]),
          key: key[1],
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done(child.exitCode);
              child.once('exit', (code) => done(code));
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`lockstep room exited (${code}): ${seen}`)));
  });
}

/** The dashboard's row of one participant, as text by column. */
async function row(dashboard, name) {
  return dashboard.evaluate((name) => {
    for (const tr of document.querySelectorAll('#people tbody tr')) {
      const cells = Object.fromEntries([...tr.cells].map((td) => [td.className, td.textContent]));
      if (cells.name === name) return { ...cells, stuck: tr.classList.contains('stuck') };
    }
    return null;
  }, name);
}

async function join(page, name) {
  await page.waitForSelector('#room-name', { timeout: 30000 });
  await page.fill('#room-name', name);
  await page.click('#room-join-button');
  await page.waitForFunction((name) => document.getElementById('room-badge')?.textContent === `In the room as ${name}`, name, {
    timeout: 20000,
  });
}

export const tests = [
  {
    name: 'room::twenty_participants_on_the_dashboard_live_through_a_restart',
    async run(ctx) {
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-room-'));
      const out = path.join(scratch, 'workshop');
      execFileSync(LOCKSTEP, ['lesson', 'pack', DRILL, '--site', DIST, '--out', out], { cwd: ROOT });
      let room = await startRoom(out);
      const base = `http://${HOST}:${room.port}/`;
      // Every name the browser looks up is room.test, mapped to loopback; nothing else resolves.
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${HOST} 127.0.0.1, MAP * ~NOTFOUND`],
      });
      try {
        say('browser up');
        const facilitator = await (await browser.newContext()).newPage();
        // Without the key: refused, with the reason.
        const refused = await facilitator.goto(`${base}room/`);
        assertEqual(refused.status(), 403, 'the dashboard without the key');
        assert((await facilitator.textContent('body')).includes('only the facilitator'), 'the reason');
        await facilitator.goto(`${base}room/?key=${room.key}`);
        await facilitator.waitForFunction(() => document.getElementById('connection').textContent === 'Live');

        say('dashboard live');
        const names = Array.from({ length: PARTICIPANTS }, (_, k) => (k === 0 ? 'Stuck Sam' : k === 1 ? '<b>Bold</b>' : `Person ${k}`));
        const pages = [];
        let samSince = 0;
        // Sam arrives first and stays on the lesson's step.
        for (let k = 0; k < PARTICIPANTS; k += 5) {
          const batch = names.slice(k, k + 5).map(async (name) => {
            const page = await (await browser.newContext()).newPage();
            await page.goto(`${base}#/lessons/ledger-drill/the-standoff`);
            assertEqual(await page.evaluate(() => window.isSecureContext), false, 'room.test over http is not a secure context');
            if (name === 'Stuck Sam') {
              // The page says plainly that it keeps no offline copy here, and what to do instead.
              await page.waitForSelector('#offline-status', { timeout: 30000 });
              const status = await page.textContent('#offline-status');
              assert(status.startsWith('No offline copy here') && status.includes('localhost') && status.includes('single file'), `the warning: ${status}`);
            }
            say(`opened ${name}`);
            await join(page, name);
            say(`joined ${name}`);
            return page;
          });
          pages.push(...(await Promise.all(batch)));
          if (k === 0) samSince = Date.now();
        }
        await until(
          async () => (await facilitator.$$('#people tbody tr')).length === PARTICIPANTS,
          'a row per participant',
          30000,
        );
        const bold = await row(facilitator, '<b>Bold</b>');
        assert(bold && bold.place === 'the-standoff', `the name is shown as text: ${JSON.stringify(bold)}`);
        assertEqual(await facilitator.$$eval('#people b', (b) => b.length), 0, 'no markup from a name');

        say('all joined');
        // Everyone but Sam moves on to the exercise; the dashboard follows each one.
        // Sam has been on his step for more than the threshold set below (a quarter of a minute).
        await sleep(Math.max(0, samSince + 17000 - Date.now()));
        await Promise.all(pages.slice(1).map((p) => p.evaluate(() => (location.hash = '#/lessons/ledger-drill/one-order'))));
        await facilitator.fill('#stuck-minutes', '0.25');
        await until(
          async () => {
            for (const name of names.slice(1)) if ((await row(facilitator, name))?.place !== 'one-order') return false;
            return true;
          },
          'every step on the dashboard',
          20000,
        );
        const sam = await row(facilitator, 'Stuck Sam');
        assert(sam.stuck && sam.status === 'looks stuck', `Sam looks stuck: ${JSON.stringify(sam)}`);
        const stuck = await facilitator.$$eval('#people tbody tr.stuck', (rows) => rows.length);
        assertEqual(stuck, 1, 'only Sam looks stuck');

        say('stuck checked');
        // One solves the exercise: the attempt and the code reach the dashboard, verified.
        const ann = pages[2];
        await ann.waitForSelector('#view-title[data-place="one-order"]', { timeout: 30000 });
        await ann.click('#check');
        await ann.waitForSelector('#try-again', { timeout: 30000 });
        await ann.selectOption('#protocol-east-app', 'single:east-locks');
        await ann.selectOption('#protocol-west-app', 'single:east-locks');
        await ann.click('#check');
        await ann.waitForSelector('#success', { timeout: 30000 });
        await until(async () => (await row(facilitator, names[2]))?.codes.includes('one-order: verified'), 'the code verified on the dashboard', 20000);
        // An attempt is reported once its result is drawn, at the latest four seconds after Check.
        await until(async () => (await row(facilitator, names[2]))?.attempts.startsWith('2 here'), 'two attempts on the dashboard', 10000);
        const annRow = await row(facilitator, names[2]);
        assert(annRow.feedback.startsWith('Solved.'), `the feedback: ${JSON.stringify(annRow)}`);

        // A participant's page cannot read the room.
        const peek = await ann.evaluate(async () => (await fetch('/room/api/state')).status);
        assertEqual(peek, 403, 'a participant reads nothing of others');

        say('code verified');
        // The room stops mid-session; a participant moves meanwhile; the room comes back.
        assertEqual(await room.stop(), 0, 'the room stops cleanly');
        await pages[3].evaluate(() => (location.hash = '#/lessons/ledger-drill'));
        await until(async () => (await pages[3].textContent('#room-badge')).includes('wait here'), 'the report waits in the browser', 20000);
        say('stopped, report waiting');
        room = await startRoom(out, room.port);
        say('restarted');
        await until(async () => (await row(facilitator, names[3]))?.lesson === 'ledger-drill' && (await row(facilitator, names[3])).place === '—', 'the waiting report arrives', 30000);
        assertEqual((await facilitator.$$('#people tbody tr')).length, PARTICIPANTS, 'nobody lost');
        assert((await row(facilitator, names[2])).codes.includes('one-order: verified'), 'the code kept');
        const csv = await facilitator.evaluate(async () => (await fetch(document.getElementById('roster').href)).text());
        assert(csv.startsWith('name,lesson,exercise,result,reason,code\n'), csv);
        assert(csv.includes(`${names[2]},ledger-drill,one-order,verified`), csv);
      } finally {
        await browser.close();
        await room.stop();
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    },
  },
];
