// Queues: pause and resume, and the limits workers recorded (per queue and per job type).
import * as api from '../api.js';
import { action, fill, h, table, time } from '../ui.js';

export const name = 'queues';
export const requests = 1;

function limit(l) {
  if (!l) return h('span.muted', 'none');
  const parts = [];
  if (l.globalConcurrency !== null) parts.push(`at most ${l.globalConcurrency} running`);
  if (l.rate) parts.push(`rate ${l.rate}`);
  if (l.partition) parts.push(`per ${l.partition}`);
  return h('span', { title: `recorded by ${l.recordedBy}` }, parts.join(', ') || 'none');
}

export function mount(el) {
  const queues = h('div');
  const types = h('div');
  el.append(h('h1', 'Queues'), queues, h('h2', 'Job types'), types);
  async function refresh() {
    const report = await api.get('/queues');
    const path = (q, verb) => `/queues/${encodeURIComponent(q)}/${verb}`;
    fill(queues, table([
      ['Queue', (q) => h('a', { href: `#/jobs?queue=${encodeURIComponent(q.queue)}` }, q.queue)],
      ['Ready', (q) => String(q.ready), { num: true }],
      ['Running', (q) => String(q.running), { num: true }],
      ['Dead', (q) => String(q.dead), { num: true }],
      ['Paused', (q) => (q.pausedSince ? h('span.paused', 'since ', time(q.pausedSince))
        : q.pausedTypes.length ? h('span.paused', `types: ${q.pausedTypes.join(', ')}`) : 'no')],
      ['Limit', (q) => limit(q.limit)],
      ['', (q) => (q.pausedSince
        ? action('Resume', async () => { await api.post(path(q.queue, 'resume')); return `Resumed ${q.queue}`; }, { id: `resume-${q.queue}` })
        : action('Pause', async () => { await api.post(path(q.queue, 'pause')); return `Paused ${q.queue}: workers start none of its jobs`; }, { id: `pause-${q.queue}` }))],
    ], report.queues, { id: 'queues-list', rowData: (q) => ({ queue: q.queue, paused: q.pausedSince ? 'yes' : 'no' }), empty: 'No queues yet.' }));
    fill(types, table([
      ['Type', (t) => t.jobType],
      ['Limit', (t) => limit(t.limit)],
      ['Blocked', (t) => (t.blocks.length ? t.blocks.map((b) => `${b.partition ?? 'all'} until ${new Date(b.until).toLocaleTimeString()}`).join('; ') : 'no')],
    ], report.types, { id: 'types-list', empty: 'No limits or blocks recorded for any job type.' }));
  }
  return { refresh };
}
