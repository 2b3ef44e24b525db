// The dashboard's shell: hash routes to pages, one refresh loop per open page (never more than one
// request a second, none while the tab is hidden), and the token prompt.
import * as api from './api.js';
import { fill, flash, h } from './ui.js';
import * as overview from './pages/overview.js';
import * as jobs from './pages/jobs.js';
import * as job from './pages/job.js';
import * as dead from './pages/dead.js';
import * as workers from './pages/workers.js';
import * as queues from './pages/queues.js';
import * as schedules from './pages/schedules.js';
import * as stuck from './pages/stuck.js';

// Each page module exports `name`, `requests` (API calls per refresh) and `mount(el, route)`,
// which builds the page and answers `refresh()`, run now and then again every
// max(REFRESH_MS, requests × 1 s).
const REFRESH_MS = 2000;

const routes = [
  [/^\/?$/, overview],
  [/^\/jobs$/, jobs],
  [/^\/jobs\/(.+)$/, job],
  [/^\/dead$/, dead],
  [/^\/workers$/, workers],
  [/^\/queues$/, queues],
  [/^\/schedules$/, schedules],
  [/^\/stuck$/, stuck],
];

let current = null; // { refresh, timer, period, running, generation }
let generation = 0;

function route() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, q = ''] = hash.split('?');
  for (const [pattern, page] of routes) {
    const m = pattern.exec(path);
    if (m) return { page, path, args: m.slice(1).map(decodeURIComponent), query: new URLSearchParams(q) };
  }
  return { page: null, path, args: [], query: new URLSearchParams(q) };
}

function open() {
  stop();
  flash('');
  const r = route();
  const main = document.getElementById('main');
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('current', r.page !== null && a.dataset.page === r.page.name);
  }
  if (!r.page) {
    fill(main, h('h1', 'Not found'), h('p', 'No page at ', h('code', r.path), '.'));
    return;
  }
  const el = h('div', { dataset: { page: r.page.name } });
  fill(main, el);
  const { refresh } = r.page.mount(el, r);
  const period = Math.max(REFRESH_MS, (r.page.requests ?? 1) * 1000);
  current = { refresh, period, timer: null, running: false, generation: ++generation };
  tick(current);
}

function stop() {
  if (current?.timer) clearTimeout(current.timer);
  current = null;
}

/** Runs one refresh of the page, then schedules the next (not while the tab is hidden). */
async function tick(page) {
  if (page !== current || page.running) return;
  clearTimeout(page.timer);
  page.timer = null;
  if (document.hidden) return; // visibilitychange starts it again
  page.running = true;
  try {
    await page.refresh();
    document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes ?? 0) + 1);
  } catch (e) {
    if (e instanceof api.ApiError && e.status === 401) {
      page.running = false;
      await askToken(e.message);
      return tick(page);
    }
    flash(e.message);
  } finally {
    page.running = false;
  }
  if (page === current && !page.timer) page.timer = setTimeout(() => tick(page), page.period);
}

/** Shows the token dialog until a token the server accepts is given. */
function askToken(why) {
  const dialog = document.getElementById('token-dialog');
  const input = document.getElementById('token-input');
  const error = document.getElementById('token-error');
  error.textContent = api.token() ? why : '';
  error.hidden = !api.token();
  input.value = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', async () => {
      api.setToken(input.value.trim());
      await whoAmI();
      resolve();
    }, { once: true });
    if (!dialog.open) dialog.showModal();
  });
}

/** Learns the token's role: a read token sees no buttons that act. */
async function whoAmI() {
  try {
    const me = await api.get('/me');
    document.body.classList.toggle('read-only', me.role !== 'admin');
    fill(document.getElementById('who'), me.token ? `${me.token} (${me.role})` : '');
  } catch (e) {
    if (e instanceof api.ApiError && e.status === 401) return askToken(e.message);
    flash(e.message);
  }
}

window.addEventListener('hashchange', open);
window.addEventListener('jobq:changed', () => current && tick(current));
document.addEventListener('visibilitychange', () => {
  if (!document.hidden && current) tick(current);
});

await whoAmI();
open();
