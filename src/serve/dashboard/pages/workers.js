// Workers: the workers seen recently, what they serve and how much they did.
import * as api from '../api.js';
import { fill, h, table, time } from '../ui.js';

export const name = 'workers';
export const requests = 1;

export function mount(el) {
  const list = h('div');
  el.append(h('h1', 'Workers'), list);
  async function refresh() {
    const workers = await api.get('/workers');
    const now = Date.now();
    fill(list, table([
      ['Name', (w) => w.name],
      ['Host', (w) => w.host],
      ['Pid', (w) => String(w.pid), { num: true }],
      ['Queues', (w) => (w.queues.length ? w.queues.join(', ') : 'all')],
      ['Started', (w) => time(w.startedAt, now)],
      ['Last seen', (w) => time(w.lastSeenAt, now)],
      ['Jobs done', (w) => String(w.jobsDone), { num: true }],
    ], workers, { id: 'workers-table', rowData: (w) => ({ workerId: w.id }), empty: 'No worker seen recently. Start one with jobq worker.' }));
  }
  return { refresh };
}
