// The facilitator's dashboard: the room's event stream drawn as a table. Every name and text a
// participant sent is set as text, never as HTML.
(() => {
  'use strict';
  const key = new URLSearchParams(location.search).get('key') || '';
  const q = `key=${encodeURIComponent(key)}`;
  const people = new Map();
  let timer = { end_ms: null, minutes: 0 };
  // The room's clock minus the browser's.
  let skew = 0;
  const $ = (id) => document.getElementById(id);
  const STUCK = 'lockstep.room.stuck-minutes';

  $('roster').href = `/room/roster.csv?${q}`;
  const stored = Number(localStorage.getItem(STUCK));
  if (stored > 0) $('stuck-minutes').value = String(stored);
  $('stuck-minutes').addEventListener('input', () => {
    localStorage.setItem(STUCK, $('stuck-minutes').value);
    draw();
  });

  const cell = (row, words, cls) => {
    const td = document.createElement('td');
    if (cls) td.className = cls;
    td.textContent = words;
    row.append(td);
    return td;
  };
  const duration = (ms) => {
    const s = Math.max(0, Math.floor(ms / 1000));
    const m = Math.floor(s / 60);
    return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m}:${String(s % 60).padStart(2, '0')}`;
  };

  const draw = () => {
    const now = Date.now() + skew;
    const stuckMs = Math.max(0.01, Number($('stuck-minutes').value) || 8) * 60000;
    const body = document.querySelector('#people tbody');
    const rows = [];
    let stuck = 0;
    let verified = 0;
    for (const p of [...people.values()].sort((a, b) => a.id - b.id)) {
      const tr = document.createElement('tr');
      tr.dataset.id = String(p.id);
      const on = now - p.since_ms;
      const isStuck = p.place !== '' && !p.passed && on >= stuckMs;
      if (isStuck) {
        tr.classList.add('stuck');
        stuck += 1;
      }
      cell(tr, p.name, 'name');
      cell(tr, p.lesson || '(course)', 'lesson');
      cell(tr, p.place || '—', 'place');
      cell(tr, duration(on), 'since');
      cell(tr, p.attempts_total ? `${p.attempts} here, ${p.attempts_total} in all` : '0', 'attempts');
      cell(tr, p.feedback, 'feedback');
      cell(tr, p.predictions_made ? `${p.predictions_right} of ${p.predictions_made} right` : '—', 'predictions');
      const codes = cell(tr, '', 'codes');
      for (const c of p.codes) {
        const span = document.createElement('span');
        span.className = `code ${c.verified ? 'verified' : 'refused'}`;
        span.textContent = `${c.exercise || '?'}: ${c.verified ? 'verified' : 'refused'}${c.reason ? ` (${c.reason})` : ''}`;
        span.title = c.code;
        if (c.verified) verified += 1;
        codes.append(span, document.createElement('br'));
      }
      cell(tr, isStuck ? 'looks stuck' : p.passed ? 'passed here' : 'working', 'status');
      rows.push(tr);
    }
    body.replaceChildren(...rows);
    $('counts').textContent = `${people.size} in the room, ${stuck} look stuck, ${verified} code(s) verified`;
    drawTimer(now);
  };

  const drawTimer = (now) => {
    const t = $('timer');
    if (!timer.end_ms) {
      t.textContent = '--:--';
      t.classList.remove('over');
      return;
    }
    const left = timer.end_ms - now;
    t.textContent = left > 0 ? duration(left + 999) : '0:00';
    t.classList.toggle('over', left <= 0);
  };

  const post = async (minutes) => {
    const response = await fetch(`/room/api/timer?${q}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ minutes }),
    });
    if (!response.ok) $('connection').textContent = (await response.text()).trim();
  };
  $('timer-start').addEventListener('click', () => post(Number($('timer-minutes').value) || 0));
  $('timer-stop').addEventListener('click', () => post(0));
  $('projector').addEventListener('click', () => {
    const on = document.body.classList.toggle('projector');
    $('projector').setAttribute('aria-pressed', String(on));
    $('projector').textContent = on ? 'Back to the room' : 'Show large';
    if (on) $('timer-panel').append($('projector'));
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && document.body.classList.contains('projector')) $('projector').click();
  });

  const connect = () => {
    const source = new EventSource(`/room/api/events?${q}`);
    source.onopen = () => {
      $('connection').textContent = 'Live';
      $('connection').classList.remove('lost');
    };
    source.onerror = () => {
      $('connection').textContent = 'The room is not reachable: trying again…';
      $('connection').classList.add('lost');
    };
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      skew = event.now_ms - Date.now();
      if (event.kind === 'snapshot') {
        people.clear();
        for (const p of event.data.participants) people.set(p.id, p);
        timer = event.data.timer;
      } else if (event.kind === 'participant') {
        people.set(event.data.id, event.data);
      } else if (event.kind === 'timer') {
        timer = event.data;
      }
      draw();
    };
  };
  connect();
  setInterval(draw, 1000);
})();
