// Schedules: the configured schedules, their next runs and last job; trigger one now, pause, resume.
import * as api from '../api.js';
import { action, fill, h, jobLink, statusBadge, table, time } from '../ui.js';

export const name = 'schedules';
export const requests = 1;

// The next tick, then the few after it, smaller: a schedule's rhythm at a glance.
function nextRuns(s, now) {
  const [next, ...later] = s.nextRuns ?? [];
  if (next === undefined) return time(s.nextRun, now);
  return h('span.next-runs', time(next, now), later.length
    ? h('ul.later', later.map((t) => h('li', time(t, now))))
    : '');
}

export function mount(el) {
  const list = h('div');
  el.append(h('h1', 'Schedules'), list);
  async function refresh() {
    const rows = await api.get('/schedules');
    const now = Date.now();
    const path = (s, verb) => `/schedules/${encodeURIComponent(s.name)}/${verb}`;
    fill(list, table([
      ['Name', (s) => s.name],
      ['When', (s) => `${s.when} (${s.timezone})`],
      ['Queue', (s) => s.queue],
      ['Type', (s) => s.type],
      ['Next runs', (s) => (s.paused ? h('span.paused', 'paused') : nextRuns(s, now))],
      ['Last tick', (s) => time(s.lastTick, now)],
      ['Last job', (s) => (s.lastJob ? h('span', jobLink(s.lastJob), ' ', s.lastJobStatus ? statusBadge(s.lastJobStatus) : '') : '—')],
      ['Overlap', (s) => s.overlap],
      ['', (s) => h('span.actions',
        action('Trigger', async () => { const e = await api.post(path(s, 'trigger')); return `Enqueued job ${e.id}`; },
          { confirm: `Run schedule ${s.name} once now?` }),
        s.paused
          ? action('Resume', async () => { await api.post(path(s, 'resume')); return `Resumed ${s.name}`; })
          : action('Pause', async () => { await api.post(path(s, 'pause')); return `Paused ${s.name}`; }))],
    ], rows, { id: 'schedules-table', rowData: (s) => ({ schedule: s.name }), empty: 'No schedules configured ([schedules] in the config).' }));
  }
  return { refresh };
}
