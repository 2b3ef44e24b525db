// Jobs: the list with the filters and paging of `jobq list`, and a jump to one job by id.
import * as api from '../api.js';
import { fill, go, h, jobLink, params, statusBadge, table, time } from '../ui.js';

export const name = 'jobs';
export const requests = 1;

const PAGE = 50;
const STATUSES = ['blocked', 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded', 'expired'];

export function mount(el, route) {
  const p = params(route);
  const offset = Number(p.offset ?? 0) || 0;
  const field = (key, label, placeholder) => h('label', label, h('input', { name: key, value: p[key] ?? '', placeholder }));
  const status = h('select', { name: 'status' }, h('option', { value: '' }, 'any'),
    STATUSES.map((s) => h('option', { value: s, selected: p.status === s }, s)));
  const form = h('form.filters#jobs-filter',
    field('queue', 'Queue', 'default'), field('type', 'Type', 'email.send'), h('label', 'Status', status),
    field('since', 'Created since', '1h or 2026-01-31T09:00:00Z'), field('until', 'Created until', '10m'),
    h('button.primary', { type: 'submit', id: 'jobs-apply' }, 'Filter'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go('/jobs', Object.fromEntries(new FormData(form).entries()));
  });
  const jump = h('form.filters#jobs-jump', h('label', 'Job id', h('input', { name: 'id', required: true, placeholder: 'id' })),
    h('button', { type: 'submit' }, 'Open'));
  jump.addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = `#/jobs/${encodeURIComponent(new FormData(jump).get('id').trim())}`;
  });
  const list = h('div');
  const pager = h('div.pager');
  el.append(h('h1', 'Jobs'), form, jump, list, pager);

  async function refresh() {
    const filter = { queue: p.queue, type: p.type, status: p.status, since: p.since, until: p.until };
    // One more than a page, to know whether there is a next one.
    const rows = await api.get(`/jobs${api.query({ ...filter, limit: PAGE + 1, offset })}`);
    const more = rows.length > PAGE;
    fill(list, table([
      ['Id', (j) => jobLink(j.jobId)],
      ['Type', (j) => j.jobType],
      ['Queue', (j) => j.queue],
      ['Status', (j) => statusBadge(j.status)],
      ['Attempt', (j) => `${j.attempt}/${j.maxAttempts}`, { num: true }],
      ['Created', (j) => time(j.createdAt)],
      ['Runs at', (j) => time(j.runAt)],
    ], rows.slice(0, PAGE), { id: 'jobs-table', rowData: (j) => ({ jobId: j.jobId, status: j.status }), empty: 'No jobs match.' }));
    fill(pager,
      h('button', { type: 'button', disabled: offset === 0, on: { click: () => go('/jobs', { ...filter, offset: Math.max(0, offset - PAGE) }) } }, '‹ Newer'),
      h('span.muted', `${offset + 1}–${offset + Math.min(rows.length, PAGE)}`),
      h('button', { type: 'button', id: 'jobs-next', disabled: !more, on: { click: () => go('/jobs', { ...filter, offset: offset + PAGE }) } }, 'Older ›'));
  }
  return { refresh };
}
