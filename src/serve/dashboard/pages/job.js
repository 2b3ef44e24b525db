// One job: its payload, meta, result, error history, progress and times, live while it is not
// finished; cancel, retry or replay, and delete.
import * as api from '../api.js';
import { action, fill, h, pretty, span, statusBadge, table, time } from '../ui.js';

export const name = 'jobs';
export const requests = 1;

const LIVE = ['pending', 'running', 'waiting'];

export function mount(el, route) {
  const id = route.args[0];
  const path = `/jobs/${encodeURIComponent(id)}`;
  const body = h('div#job');
  el.append(h('h1', 'Job ', h('code', id)), body);

  function actions(job) {
    const buttons = [];
    if (LIVE.includes(job.status)) {
      buttons.push(action('Cancel', async () => { await api.post(`${path}/cancel`); return 'Cancelled'; },
        { id: 'job-cancel', confirm: `Cancel job ${id}?` }));
    }
    if (job.status === 'dead') {
      buttons.push(action('Replay', async () => { await api.post('/dead/replay', { ids: [id] }); return 'Replayed: pending again'; },
        { id: 'job-replay' }));
    } else if (!LIVE.includes(job.status)) {
      buttons.push(action('Retry', async () => { await api.post(`${path}/retry`); return 'Retried: pending again'; },
        { id: 'job-retry' }));
    }
    const force = job.status === 'running' || job.status === 'waiting';
    buttons.push(action('Delete', async () => {
      await api.del(`${path}${force ? '?force=true' : ''}`);
      location.hash = '#/jobs';
      return `Deleted job ${id}`;
    }, { id: 'job-delete', danger: true, confirm: `Delete job ${id}${force ? ` while it is ${job.status}` : ''}? This cannot be undone.` }));
    return h('div.actions', buttons);
  }

  async function refresh() {
    const job = await api.get(path);
    const now = Date.now();
    const progress = job.progress
      ? h('span', h('progress', { max: 100, value: job.progress.percent }), ` ${job.progress.percent}% `, job.progress.message ?? '')
      : h('span.muted', '—');
    const ran = job.startedAt ? span((job.finishedAt ?? now) - job.startedAt) : '—';
    fill(body,
      h('div.card', h('dl.fields',
        h('dt', 'Status'), h('dd', statusBadge(job.status), LIVE.includes(job.status) ? h('span.muted', ' (live)') : ''),
        h('dt', 'Type'), h('dd', job.jobType),
        h('dt', 'Queue'), h('dd', h('a', { href: `#/jobs?queue=${encodeURIComponent(job.queue)}` }, job.queue)),
        h('dt', 'Attempt'), h('dd', `${job.attempt} of ${job.maxAttempts}`),
        h('dt', 'Priority'), h('dd', String(job.priority)),
        h('dt', 'Progress'), h('dd', progress),
        h('dt', 'Created'), h('dd', time(job.createdAt, now)),
        h('dt', 'Runs at'), h('dd', time(job.runAt, now)),
        h('dt', 'Started'), h('dd', time(job.startedAt, now)),
        h('dt', 'Heartbeat'), h('dd', time(job.heartbeatAt, now)),
        h('dt', 'Finished'), h('dd', time(job.finishedAt, now)),
        h('dt', 'Run time'), h('dd', ran),
        h('dt', 'Worker'), h('dd', job.workerId ?? '—'),
        h('dt', 'Unique key'), h('dd', job.uniqueKey ?? '—'),
      ), actions(job)),
      h('div.grid',
        h('div', h('h2', 'Payload'), pretty(job.payload)),
        h('div', h('h2', 'Result'), pretty(job.result)),
        h('div', h('h2', 'Meta'), pretty(job.meta))),
      h('h2', 'Errors'),
      table([
        ['Attempt', (e) => String(e.attempt), { num: true }],
        ['At', (e) => time(e.at, now)],
        ['Error', (e) => e.error, { wrap: true }],
      ], [...(job.errors ?? [])].reverse(), { id: 'job-errors', empty: 'No errors.' }));
  }
  return { refresh };
}
