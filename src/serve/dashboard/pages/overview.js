// Overview: per queue its counts, whether it is paused, how long its oldest ready job has waited, and
// the jobs it finished per minute over the last hour.
import * as api from '../api.js';
import { bars, spark } from '../chart.js';
import { fill, h, span, table } from '../ui.js';

export const name = 'overview';
export const requests = 2;

export function mount(el) {
  const chart = h('div.card', h('p.muted', 'Loading…'));
  const queues = h('div#overview-queues');
  el.append(h('h1', 'Overview'), h('h2', 'Jobs finished per minute, last hour'), chart, h('h2', 'Queues'), queues);

  async function refresh() {
    const [stats, tp] = await Promise.all([api.get('/stats'), api.get('/throughput')]);
    const series = new Map(tp.queues.map((q) => [q.queue, q]));
    const total = Array.from({ length: tp.buckets }, (_, i) => tp.queues.reduce((n, q) => n + q.finished[i], 0));
    const label = (i) => new Date(tp.since + i * tp.bucketMs).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    fill(chart,
      bars(total, { label }),
      h('p.muted', `${total.reduce((a, b) => a + b, 0)} finished in the last hour, per ${span(tp.bucketMs)}`));

    const pauses = stats.paused ?? [];
    const pausedOf = (queue) => {
      const whole = pauses.find((p) => p.queue === queue && !p.jobType);
      if (whole) return h('span.paused', { title: `since ${new Date(whole.since).toLocaleString()}` }, 'paused');
      const types = pauses.filter((p) => p.queue === queue && p.jobType).map((p) => p.jobType);
      return types.length ? h('span.paused', `types: ${types.join(', ')}`) : 'no';
    };
    const queueLink = (q, status) => h('a', { href: `#/jobs?queue=${encodeURIComponent(q.queue)}&status=${status}` }, String(q[status === 'pending' ? 'ready' : status]));
    const rows = [...stats.queues, { ...stats.totals, isTotal: true }];
    fill(queues, table([
      ['Queue', (q) => (q.isTotal ? h('strong', 'total') : h('a', { href: `#/jobs?queue=${encodeURIComponent(q.queue)}` }, q.queue))],
      ['Ready', (q) => (q.isTotal ? String(q.ready) : queueLink(q, 'pending')), { num: true }],
      ['Scheduled', (q) => String(q.scheduled), { num: true }],
      ['Blocked', (q) => (q.isTotal || !q.blocked ? String(q.blocked) : queueLink(q, 'blocked')), { num: true }],
      ['Running', (q) => (q.isTotal ? String(q.running) : queueLink(q, 'running')), { num: true }],
      ['Waiting', (q) => String(q.waiting), { num: true }],
      ['Dead', (q) => (q.isTotal || !q.dead ? String(q.dead) : h('a', { href: `#/dead?queue=${encodeURIComponent(q.queue)}` }, String(q.dead))), { num: true }],
      ['Paused', (q) => (q.isTotal ? '' : pausedOf(q.queue))],
      ['Oldest ready', (q) => (q.oldestReadyAt ? span(tp.now - q.oldestReadyAt) : '—'), { num: true }],
      ['Finished / min, 1 h', (q) => spark(q.isTotal ? total : series.get(q.queue)?.finished ?? [])],
    ], stats.queues.length ? rows : [], {
      id: 'queues-table',
      rowData: (q) => ({ queue: q.isTotal ? '' : q.queue }),
      empty: 'No jobs yet: enqueue some with jobq enqueue or POST /api/v1/jobs.',
    }));
  }
  return { refresh };
}
