// The participant's side of `lockstep room`. The room adds this script to the site's page, so
// a copy of the site served by anything else never runs it and reports nothing.
//
// It asks for a display name once, then watches what the page already keeps and shows (the
// address, the progress in local storage, the result of Check and of a "your turn" step) and
// reports each change to the room. Reports wait in local storage and are sent when the room
// answers, so a participant whose Wi-Fi drops loses none of them.
(() => {
  'use strict';
  const KEY = 'lockstep.room.v1';
  // The page's own keys, written here by the room from the app's (ui::course).
  const PROGRESS = '__PROGRESS_KEY__';
  const LEARNER = '__NAME_KEY__';
  const NAME_MAX = 40;
  const FEEDBACK_MAX = 400;
  const QUEUE_MAX = 500;
  const BATCH_MAX = 32;
  const ID = /^[A-Za-z0-9._-]{0,80}$/;

  const load = () => {
    try {
      const s = JSON.parse(localStorage.getItem(KEY) || 'null');
      if (s && s.origin === location.origin && Array.isArray(s.queue)) return s;
    } catch (e) {
      // Unreadable: start again.
    }
    return { origin: location.origin, name: '', id: 0, token: '', seq: 0, queue: [], known: {} };
  };
  let state = load();
  const save = () => {
    try {
      localStorage.setItem(KEY, JSON.stringify(state));
    } catch (e) {
      // Storage full or refused: the reports still go while the page is open.
    }
  };

  const push = (report) => {
    state.seq += 1;
    state.queue.push({ seq: state.seq, ...report });
    if (state.queue.length > QUEUE_MAX) state.queue.splice(0, state.queue.length - QUEUE_MAX);
    save();
  };

  // Where the participant is: `#/lessons/LESSON/PLACE`.
  const where = () => {
    const m = /^#\/lessons\/([^/?]+)(?:\/([^/?]+))?/.exec(location.hash);
    const lesson = m ? decodeURIComponent(m[1]) : '';
    const place = m && m[2] ? decodeURIComponent(m[2]) : '';
    return ID.test(lesson) && ID.test(place) ? { lesson, place } : { lesson: '', place: '' };
  };

  const text = (el) => (el ? el.textContent.replace(/\s+/g, ' ').trim().slice(0, FEEDBACK_MAX) : '');

  // What the page keeps in local storage: predictions, codes, hints. Each is reported once.
  const readProgress = () => {
    let p;
    try {
      p = JSON.parse(localStorage.getItem(PROGRESS) || 'null');
    } catch (e) {
      return;
    }
    const lessons = p && typeof p.lessons === 'object' && p.lessons ? p.lessons : {};
    for (const [lesson, lp] of Object.entries(lessons)) {
      if (!ID.test(lesson) || !lp || typeof lp !== 'object') continue;
      for (const [place, right] of Object.entries(lp.predictions || {})) {
        const k = `p/${lesson}/${place}`;
        if (ID.test(place) && !state.known[k]) {
          state.known[k] = 1;
          push({ kind: 'prediction', lesson, place, right: right === true });
        }
      }
      for (const [place, code] of Object.entries(lp.solved || {})) {
        const k = `c/${lesson}/${place}/${code}`;
        if (typeof code === 'string' && code && !state.known[k]) {
          state.known[k] = 1;
          push({ kind: 'code', code: code.slice(0, 2048) });
        }
      }
      for (const [place, count] of Object.entries(lp.hints || {})) {
        const k = `h/${lesson}/${place}`;
        if (ID.test(place) && Number.isInteger(count) && count <= 100 && state.known[k] !== count) {
          state.known[k] = count;
          push({ kind: 'hint', lesson, place, count });
        }
      }
    }
  };

  let last = null;
  let gate = '';
  const observe = () => {
    const here = where();
    const now = `${here.lesson}/${here.place}`;
    if (now !== last) {
      last = now;
      gate = '';
      if (state.known.place !== now) {
        state.known.place = now;
        push({ kind: 'place', ...here });
      }
    }
    // A "your turn" step: each new reading of its gate is an attempt.
    const g = document.getElementById('gate');
    if (g && here.place) {
      const reading = `${g.classList.contains('met')}|${text(document.getElementById('gate-status'))}`;
      if (reading !== gate) {
        if (gate) {
          push({
            kind: 'gate',
            ...here,
            passed: g.classList.contains('met'),
            feedback: text(document.getElementById('gate-status')),
          });
        }
        gate = reading;
      }
    }
    readProgress();
    save();
  };

  // An exercise's Check: its result is read once the page has drawn it.
  document.addEventListener(
    'click',
    (event) => {
      const button = event.target instanceof Element ? event.target.closest('#check') : null;
      if (!button) return;
      const here = where();
      const result = document.getElementById('result');
      let done = false;
      const report = () => {
        if (done) return;
        done = true;
        observer.disconnect();
        const success = document.getElementById('success');
        const again = document.getElementById('try-again');
        push({ kind: 'attempt', ...here, passed: !!success, feedback: text(success || again) });
      };
      const observer = new MutationObserver(() => setTimeout(report, 150));
      if (result) observer.observe(result, { childList: true, subtree: true, characterData: true });
      setTimeout(report, 4000);
    },
    true,
  );

  // A small badge says the page reports to the room, and how.
  const badge = document.createElement('div');
  badge.id = 'room-badge';
  badge.setAttribute('role', 'status');
  badge.style.cssText =
    'position:fixed;left:8px;bottom:8px;z-index:50;font:12px system-ui,sans-serif;padding:2px 8px;' +
    'border-radius:10px;background:#eef;color:#223;border:1px solid #99b;opacity:.9';
  const show = (words) => {
    badge.textContent = words;
  };

  const ask = (reason) => {
    if (document.getElementById('room-join')) return;
    const form = document.createElement('form');
    form.id = 'room-join';
    form.style.cssText =
      'position:fixed;left:50%;top:20%;transform:translateX(-50%);z-index:60;max-width:22em;' +
      'padding:1em 1.2em;background:#fff;color:#111;border:2px solid #447;border-radius:8px;' +
      'box-shadow:0 4px 24px #0004;font:16px system-ui,sans-serif';
    const title = document.createElement('p');
    title.textContent = 'This room shows the facilitator where you are. Your name for the room:';
    const input = document.createElement('input');
    input.id = 'room-name';
    input.maxLength = NAME_MAX;
    input.required = true;
    input.autocomplete = 'name';
    input.setAttribute('aria-label', 'Your name for the room');
    input.value = state.name || localStorage.getItem(LEARNER) || '';
    const button = document.createElement('button');
    button.type = 'submit';
    button.id = 'room-join-button';
    button.textContent = 'Join the room';
    const note = document.createElement('p');
    note.id = 'room-join-reason';
    note.textContent = reason || '';
    form.append(title, input, ' ', button, note);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      state.name = name;
      save();
      form.remove();
      join();
    });
    document.body.append(form);
    input.focus();
  };

  let joining = false;
  const join = async () => {
    if (joining) return;
    joining = true;
    try {
      const response = await fetch('/room/api/join', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: state.name }),
        cache: 'no-store',
      });
      if (response.ok) {
        const answer = await response.json();
        state.id = answer.id;
        state.token = answer.token;
        save();
        // Codes carry the learner's name: the room's name, unless they chose one already.
        if (!localStorage.getItem(LEARNER)) localStorage.setItem(LEARNER, state.name);
        show(`In the room as ${state.name}`);
        return;
      }
      const reason = (await response.text()).trim();
      if (response.status === 400 || response.status === 409) {
        state.name = '';
        save();
        ask(reason);
      } else {
        show(`The room said: ${reason}`);
      }
    } catch (e) {
      show('The room is not reachable: your progress waits here');
    } finally {
      joining = false;
    }
  };

  let sending = false;
  const send = async () => {
    if (sending || !state.token || state.queue.length === 0) return;
    sending = true;
    const batch = state.queue.slice(0, BATCH_MAX);
    try {
      const response = await fetch('/room/api/report', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${state.token}` },
        body: JSON.stringify({ reports: batch }),
        cache: 'no-store',
      });
      if (response.ok) {
        const answer = await response.json();
        state.queue = state.queue.filter((r) => r.seq > answer.received);
        show(`In the room as ${state.name}`);
      } else if (response.status === 401) {
        // The room no longer knows this token (a new room on the same address): join again.
        state.token = '';
        join();
      } else if (response.status === 400 || response.status === 413) {
        // A report the room refuses would block the rest: drop it, and say so in the console.
        console.warn('room: reports refused:', await response.text());
        state.queue = state.queue.filter((r) => r.seq > batch[batch.length - 1].seq);
      }
      save();
    } catch (e) {
      show(`The room is not reachable: ${state.queue.length} report(s) wait here`);
    }
    sending = false;
  };

  const start = () => {
    document.body.append(badge);
    if (!state.name) ask('');
    else if (!state.token) join();
    else show(`In the room as ${state.name}`);
    observe();
    setInterval(() => {
      observe();
      if (state.name && !state.token && !document.getElementById('room-join')) join();
      send();
    }, 1000);
    addEventListener('hashchange', observe);
    addEventListener('online', send);
  };
  if (document.body) start();
  else addEventListener('DOMContentLoaded', start);
})();
