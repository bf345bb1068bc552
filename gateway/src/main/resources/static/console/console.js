// The operator console: reads the admin API with the token the operator enters (kept in this tab's sessionStorage
// only) and acts through it after a confirmation. Plain DOM, no build step.
'use strict';

const TOKEN_KEY = 'lazarus-admin-token';
const REFRESH_MS = 2000;
const $ = (selector) => document.querySelector(selector);

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

async function api(method, path, body) {
  const headers = { 'Authorization': 'Bearer ' + token() };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const json = text ? JSON.parse(text) : {};
  if (!response.ok) {
    throw new Error(response.status + ': ' + ((json.error && json.error.message) || text));
  }
  return json;
}

function cell(row, content, className) {
  const td = document.createElement('td');
  if (content instanceof Node) {
    td.appendChild(content);
  } else {
    td.textContent = content === null || content === undefined ? '' : String(content);
  }
  if (className) {
    td.className = className;
  }
  row.appendChild(td);
  return td;
}

function badge(text, tone, detail) {
  const span = document.createElement('span');
  const b = document.createElement('span');
  b.className = 'badge ' + (tone || '');
  b.textContent = text;
  span.appendChild(b);
  if (detail) {
    const d = document.createElement('span');
    d.className = 'detail';
    d.textContent = detail;
    span.appendChild(d);
  }
  return span;
}

/** The health badge; a model load in progress adds a progress bar with its percent and time left. */
function health(h) {
  const span = badge(h.status, TONES[h.status], h.detail);
  if (h.loading) {
    const line = document.createElement('span');
    line.className = 'loading';
    const bar = document.createElement('progress');
    bar.max = 100;
    bar.value = h.loading.percent;
    line.append(bar, ' ' + h.loading.percent + ' %'
        + (h.loading.eta_seconds != null ? ' (about ' + h.loading.eta_seconds + ' s left)' : ''));
    span.appendChild(line);
  }
  return span;
}

const TONES = {
  ACTIVE: 'good', PROMOTED: 'good', UP: 'good', CLOSED: 'good',
  CANDIDATE: 'warn', LOADING: 'warn', HALF_OPEN: 'warn', FORCED_OPEN: 'bad',
  DISABLED: 'bad', ROLLED_BACK: 'bad', DOWN: 'bad', OPEN: 'bad'
};

/** The actions an operator can take on a backend in its current state (the admin API refuses the others). */
function actionsFor(b) {
  const actions = [];
  actions.push(b.draining ? ['undrain', 'Undrain'] : ['drain', 'Drain']);
  if (b.state === 'CANDIDATE') {
    actions.push(['gate', 'Run gate'], ['promote', 'Promote']);
  }
  if (b.state === 'PROMOTED') {
    actions.push(['rollback', 'Roll back']);
  }
  if (b.state === 'DISABLED' || b.state === 'ROLLED_BACK') {
    actions.push(['enable', 'Re-enable']);
  }
  return actions;
}

function renderBackends(list) {
  const body = $('#backends tbody');
  body.replaceChildren();
  for (const b of list) {
    const row = document.createElement('tr');
    row.className = 'backend';
    row.dataset.backend = b.id;
    cell(row, b.id);
    cell(row, b.kind);
    cell(row, b.role);
    cell(row, badge(b.state + (b.draining ? ' (draining)' : ''), b.draining ? 'warn' : TONES[b.state], b.reason));
    cell(row, b.breaker ? badge(b.breaker.state, TONES[b.breaker.state]) : '–');
    cell(row, b.health ? health(b.health) : '–');
    const live = b.live || {};
    cell(row, live.tokens_per_second == null ? '–' : live.tokens_per_second.toFixed(1), 'num');
    cell(row, live.ttft_p50_ms == null ? '–' : live.ttft_p50_ms + ' / ' + live.ttft_p95_ms + ' ms', 'num');
    cell(row, b.in_flight, 'num');
    cell(row, (b.models || []).join(', '));
    const buttons = document.createElement('span');
    for (const [action, label] of actionsFor(b)) {
      const button = document.createElement('button');
      button.textContent = label;
      button.dataset.action = action;
      button.addEventListener('click', () => confirmThen(label + ' backend \'' + b.id + '\'?', (reason) => act(b.id, action, reason)));
      buttons.appendChild(button);
    }
    cell(row, buttons);
    body.appendChild(row);
  }
}

function renderTiers(placements) {
  const box = $('#tiers');
  box.replaceChildren();
  $('#tiers-section').hidden = placements.length === 0;
  for (const [id, p] of placements) {
    const line = document.createElement('p');
    line.className = 'tiers';
    const tiers = (p.tiers || []).map((t) => t.tier + ' ' + t.experts + ' experts, ' + (t.bytes / 1048576).toFixed(1)
        + ' MiB' + (t.budget_bytes > 0 ? ' of ' + (t.budget_bytes / 1048576).toFixed(1) : '')
        + ', hit ' + Math.round((t.byte_hit_rate || 0) * 100) + ' %');
    line.textContent = id + ' (' + (p.device || p.strategy || '') + '): ' + (tiers.join(' · ') || (p.error || 'no placement'));
    box.appendChild(line);
  }
}

function renderJobs(jobs) {
  const body = $('#jobs tbody');
  body.replaceChildren();
  for (const j of jobs) {
    const row = document.createElement('tr');
    row.className = 'job';
    cell(row, j.submitted_at);
    cell(row, j.candidate);
    cell(row, j.oracle || '–');
    cell(row, badge(j.status, j.status === 'done' ? 'good' : j.status === 'failed' ? 'bad' : 'warn', j.error));
    cell(row, j.percent + ' %' + (j.eta_seconds != null ? ' (about ' + j.eta_seconds + ' s left)' : ''), 'num');
    cell(row, j.verdict || '');
    cell(row, (j.reasons || []).join('; '));
    body.appendChild(row);
  }
}

function renderEvents(events) {
  const body = $('#events tbody');
  body.replaceChildren();
  for (const e of events) {
    const row = document.createElement('tr');
    row.className = 'event';
    cell(row, e.at);
    cell(row, e.actor);
    cell(row, e.action);
    cell(row, e.backend_id);
    cell(row, e.from && e.to && e.from !== e.to ? e.from + ' → ' + e.to : '');
    cell(row, e.reason);
    body.appendChild(row);
  }
}

function confirmThen(question, action) {
  const dialog = $('#confirm');
  $('#confirm-text').textContent = question;
  dialog.onclose = () => {
    if (dialog.returnValue === 'ok') {
      action($('#confirm-reason').value);
    }
  };
  dialog.returnValue = '';
  dialog.showModal();
}

async function act(id, action, reason) {
  try {
    if (action === 'gate') {
      const job = await api('POST', '/admin/benchmarks', { candidate: id });
      setStatus('gate job ' + job.id + ' started for ' + id);
    } else {
      await api('POST', '/admin/backends/' + encodeURIComponent(id) + '/' + action, { reason });
      setStatus(action + ' ' + id + ': done');
    }
  } catch (e) {
    setStatus(action + ' ' + id + ' failed: ' + e.message);
  }
  refresh();
}

function setStatus(text) {
  $('#status').textContent = text;
}

let refreshing = false;

async function refresh() {
  if (!token() || refreshing) {
    return;
  }
  refreshing = true;
  try {
    const [backends, jobs, events] = await Promise.all([
      api('GET', '/admin/backends'), api('GET', '/admin/benchmarks'), api('GET', '/admin/events?size=15')]);
    renderBackends(backends.data);
    renderJobs(jobs.data);
    renderEvents(events.data);
    const kt = backends.data.filter((b) => b.kind === 'kt-native');
    const placements = await Promise.all(kt.map((b) => api('GET', '/admin/backends/' + encodeURIComponent(b.id) + '/placement')
        .then((p) => [b.id, p], (e) => [b.id, { error: e.message }])));
    renderTiers(placements);
    document.body.dataset.loaded = 'true';
    if (!$('#status').textContent || $('#status').textContent.startsWith('updated')) {
      setStatus('updated ' + new Date().toLocaleTimeString());
    }
  } catch (e) {
    setStatus(e.message);
  } finally {
    refreshing = false;
  }
}

$('#login').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $('#token').value);
  $('#token').value = '';
  setStatus('');
  refresh();
});

if (!token()) {
  setStatus('enter the admin token to connect');
}
refresh();
setInterval(refresh, REFRESH_MS);
