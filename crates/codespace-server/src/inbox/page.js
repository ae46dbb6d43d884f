// The CodeSpace inbox page: lists the confirmation holds waiting for a decision (grant or
// deny), the works of every workspace and their instruction queues, and lets the person
// write, queue, edit, reorder, cancel and stop. Every string
// from the server is put in the page as text (textContent / append of strings), never as
// markup, and every control and format character in it (bidirectional marks, zero-width
// characters, separators) is shown written out as \u{XXXX}: a name can never reorder or
// hide what the person reads. The token lives in this tab's session storage and travels
// only in the Authorization header of requests to this server.
'use strict';

const TOKEN_KEY = 'codespace-inbox-token';
const POLL_MS = 1000;
const DELIVERIES = [
  ['next_checkpoint', 'at the next checkpoint'],
  ['after_current_work', 'after the current work'],
  ['next_work', 'with the next work'],
];

let token = sessionStorage.getItem(TOKEN_KEY);
let shown = '';
let editing = false;
let timer = null;
// Who wrote an instruction, as the ledger records it.
const AUTHORS = {
  'person-inbox': 'by the person (inbox)',
  'person-cli': 'by the person (CLI)',
  unrecorded: 'author not recorded (written before the person token)',
};
// What the person is writing in each work's box, kept across re-renders.
const unsent = new Map();
// The page shows at most this many works (the newest).
const MAX_WORKS = 30;

const byId = (id) => document.getElementById(id);

// C0, DEL, C1, the line and paragraph separators, and Unicode's format characters
// (bidirectional marks and embeddings, zero-width characters, the byte order mark, tags).
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\u{110bd}|\u{110cd}|[\u{13430}-\u{1343f}]|[\u{1bca0}-\u{1bca3}]|[\u{1d173}-\u{1d17a}]|\u{e0001}|[\u{e0020}-\u{e007f}]/gu;

// Text as the person should read it: every hidden character written out as \u{XXXX}; with
// `lines`, line feeds and tabs stay (an instruction's or a summary's lines).
function visible(text, lines) {
  return String(text).replace(HIDDEN, (c) => {
    if (lines && (c === '\n' || c === '\t')) return c;
    return `\\u{${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}}`;
  });
}

// Builds an element; string children become text nodes, never markup.
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function setStatus(text, isError) {
  const status = byId('status');
  status.textContent = text;
  status.classList.toggle('error', Boolean(isError));
}

class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? `${body.code}: ${body.message}` : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(method, path, body) {
  const init = { method, headers: { Authorization: `Bearer ${token}` }, cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
  if (response.status === 401) {
    logout('The token was refused: the inbox takes the person token, not the MCP token.');
    throw new ApiError(401, data);
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// Runs a person's action, reports its failure, and refreshes at once.
async function act(what, fn) {
  try {
    const note = await fn();
    setStatus(typeof note === 'string' ? note : `${what}: done`);
  } catch (e) {
    setStatus(`${what} failed: ${e.message}`, true);
  }
  editing = false;
  await refresh(true);
}

function logout(message) {
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  if (timer) clearInterval(timer);
  timer = null;
  shown = '';
  byId('works').replaceChildren();
  byId('login').hidden = false;
  byId('forget').hidden = true;
  setStatus(message || '', Boolean(message));
}

function login(value) {
  token = value;
  sessionStorage.setItem(TOKEN_KEY, value);
  byId('login').hidden = true;
  byId('forget').hidden = false;
  refresh(true);
  timer = setInterval(() => refresh(false), POLL_MS);
}

async function refresh(force) {
  if (!token) return;
  let snapshot;
  try {
    const works = (await api('GET', '/inbox/works')).slice(0, MAX_WORKS);
    const queues = await Promise.all(
      works.map((w) => api('GET', `/inbox/works/${encodeURIComponent(w.work_id)}/intents`)),
    );
    const holds = await api('GET', '/inbox/holds');
    snapshot = { holds, works: works.map((w, i) => ({ work: w, intents: queues[i] })) };
  } catch (e) {
    if (token) setStatus(`refresh failed: ${e.message}`, true);
    return;
  }
  const text = JSON.stringify(snapshot);
  const status = byId('status');
  if (!status.classList.contains('error') || status.textContent.startsWith('refresh failed')) {
    setStatus(`updated ${new Date().toLocaleTimeString()}`);
  }
  if ((text === shown && !force) || (editing && !force)) return;
  shown = text;
  const focused = document.activeElement && document.activeElement.dataset.composeFor;
  render(snapshot);
  if (focused) {
    const area = [...document.querySelectorAll('textarea[data-compose-for]')]
      .find((a) => a.dataset.composeFor === focused);
    if (area) { area.focus(); area.setSelectionRange(area.value.length, area.value.length); }
  }
}

function render(snapshot) {
  const main = byId('works');
  const parts = [];
  if (snapshot.holds.length > 0) parts.push(renderHolds(snapshot.holds));
  if (snapshot.works.length === 0) {
    parts.push(el('p', { class: 'empty', text: 'No work yet: an agent opens one with work_open.' }));
    main.replaceChildren(...parts);
    return;
  }
  const groups = new Map();
  for (const entry of snapshot.works) {
    const ws = entry.work.workspace_id;
    if (!groups.has(ws)) groups.set(ws, []);
    groups.get(ws).push(entry);
  }
  const sections = [];
  for (const [ws, entries] of groups) {
    sections.push(el('section', { class: 'workspace', 'data-workspace-id': ws },
      el('h2', { text: `Workspace ${visible(ws)}` }),
      ...entries.map(renderWork)));
  }
  main.replaceChildren(...parts, ...sections);
}

function renderHolds(holds) {
  return el('section', { class: 'holds', 'aria-label': 'Confirmation holds' },
    el('h2', { text: 'Waiting for your confirmation' }),
    ...holds.map((hold) => {
      const path = `/inbox/holds/${encodeURIComponent(hold.approval_id)}`;
      const deny = () => {
        if (!window.confirm('Deny: the action will never run. Deny it?')) return;
        act('deny', () => api('POST', `${path}/deny`));
      };
      return el('article', { class: 'hold', 'data-approval-id': hold.approval_id },
        el('div', { class: 'meta' }, badge(hold.state), el('span', { text: visible(hold.tool) }),
          el('span', { text: `workspace ${visible(hold.workspace_id)}` }),
          el('span', { text: new Date(hold.created_at * 1000).toLocaleString() })),
        el('pre', { class: 'summary', text: visible(hold.summary, true) }),
        el('div', { class: 'actions' },
          el('button', { type: 'button', class: 'grant', onclick: () => act('grant', () => api('POST', `${path}/grant`)) }, 'Grant'),
          el('button', { type: 'button', class: 'danger deny', onclick: deny }, 'Deny')));
    }));
}

function badge(text) {
  return el('span', { class: `badge ${text}`, text });
}

function renderWork({ work, intents }) {
  const open = work.state === 'active' || work.state === 'closing';
  const head = el(open ? 'div' : 'summary', { class: 'work-head' },
    el('span', { class: 'work-title', text: visible(work.title || work.work_id) }),
    badge(work.state),
    el('span', { class: 'meta', text: `revision ${work.queue_revision}` }),
    open ? el('button', { type: 'button', class: 'danger stop', onclick: () => stopWork(work) }, 'Stop') : null);
  const editable = intents.filter((i) => i.state === 'draft' || i.state === 'queued');
  const list = el('ol', { class: 'queue' },
    ...intents.map((i) => renderIntent(i, editable, work)));
  const body = [head, el('div', { class: 'meta', text: visible(work.work_id) }), list, compose(work)];
  if (intents.length === 0) body.splice(2, 0, el('p', { class: 'empty', text: 'No instruction yet.' }));
  return el(open ? 'article' : 'details', { class: 'work', 'data-work-id': work.work_id }, ...body);
}

function renderIntent(intent, editable, work) {
  const li = el('li', { class: 'intent', 'data-intent-id': intent.intent_id, 'data-state': intent.state });
  const label = DELIVERIES.find(([d]) => d === intent.delivery);
  li.append(
    el('div', { class: 'meta' }, badge(intent.state),
      el('span', { text: intent.kind.replace('_', ' ') }),
      el('span', { class: 'author', text: AUTHORS[intent.author] || visible(intent.author) }),
      el('span', { text: label ? label[1] : intent.delivery }),
      el('span', { text: `revision ${intent.revision}` })),
    el('p', { class: 'body', text: visible(intent.body, true) }));
  if (intent.state !== 'draft' && intent.state !== 'queued') return li;
  const index = editable.findIndex((i) => i.intent_id === intent.intent_id);
  const move = (delta) => {
    const ids = editable.map((i) => i.intent_id);
    const [id] = ids.splice(index, 1);
    ids.splice(index + delta, 0, id);
    act('reorder', () => api('POST', `/inbox/works/${encodeURIComponent(work.work_id)}/reorder`, { intent_ids: ids }));
  };
  const path = `/inbox/intents/${encodeURIComponent(intent.intent_id)}`;
  li.append(el('div', { class: 'actions' },
    intent.state === 'draft'
      ? el('button', { type: 'button', class: 'queue', onclick: () => act('queue', () => api('POST', `${path}/queue`, { revision: intent.revision })) }, 'Queue')
      : null,
    el('button', { type: 'button', class: 'edit', onclick: () => startEdit(li, intent) }, 'Edit'),
    index > 0 ? el('button', { type: 'button', class: 'up', onclick: () => move(-1) }, '↑') : null,
    index < editable.length - 1 ? el('button', { type: 'button', class: 'down', onclick: () => move(1) }, '↓') : null,
    el('button', { type: 'button', class: 'danger cancel', onclick: () => act('cancel', () => api('POST', `${path}/cancel`)) }, 'Cancel')));
  return li;
}

function deliverySelect(value) {
  const select = el('select', { 'aria-label': 'Delivery' });
  for (const [v, label] of DELIVERIES) {
    const option = el('option', { value: v, text: label });
    if (v === value) option.selected = true;
    select.append(option);
  }
  return select;
}

function startEdit(li, intent) {
  editing = true;
  const area = el('textarea', { 'aria-label': 'Instruction' });
  area.value = intent.body;
  const select = deliverySelect(intent.delivery);
  const save = () => act('edit', () => api('PATCH', `/inbox/intents/${encodeURIComponent(intent.intent_id)}`,
    { revision: intent.revision, body: area.value, delivery: select.value }));
  li.replaceChildren(el('div', { class: 'compose' }, area, select,
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'save', onclick: save }, 'Save'),
      el('button', { type: 'button', onclick: () => { editing = false; refresh(true); } }, 'Discard'))));
  area.focus();
}

function compose(work) {
  const open = work.state === 'active' || work.state === 'closing';
  const area = el('textarea', {
    'aria-label': 'New instruction',
    'data-compose-for': work.work_id,
    placeholder: open ? 'Tell the agent…' : 'For the next work in this workspace…',
  });
  const kept = unsent.get(work.work_id);
  const select = deliverySelect(kept ? kept.delivery : (open ? 'after_current_work' : 'next_work'));
  if (kept) area.value = kept.body;
  const keep = () => unsent.set(work.work_id, { body: area.value, delivery: select.value });
  area.addEventListener('input', keep);
  select.addEventListener('change', keep);
  const send = (queueIt) => {
    const body = area.value;
    if (body.trim() === '') { setStatus('write an instruction first', true); return; }
    act(queueIt ? 'queue' : 'save draft', async () => {
      const draft = await api('POST', `/inbox/works/${encodeURIComponent(work.work_id)}/intents`,
        { body, delivery: select.value });
      unsent.delete(work.work_id);
      if (queueIt) {
        await api('POST', `/inbox/intents/${encodeURIComponent(draft.intent_id)}/queue`, { revision: draft.revision });
      }
    });
  };
  return el('div', { class: 'compose' }, area, select,
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'send', onclick: () => send(true) }, 'Queue'),
      el('button', { type: 'button', class: 'draft', onclick: () => send(false) }, 'Save draft')));
}

function stopWork(work) {
  if (!window.confirm(`Stop: kill every process of workspace ${visible(work.workspace_id)} and tell the agent?`)) return;
  act('stop', async () => {
    const r = await api('POST', `/inbox/works/${encodeURIComponent(work.work_id)}/stop`, {});
    return `stopped: ${r.killed} process(es) killed`;
  });
}

document.addEventListener('DOMContentLoaded', () => {
  byId('login').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = byId('token').value.trim();
    byId('token').value = '';
    if (value) login(value);
  });
  byId('forget').addEventListener('click', () => logout(''));
  if (token) login(token);
  else logout('');
});
