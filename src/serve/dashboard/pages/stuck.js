// Stuck: what `jobq doctor` finds (stuck and overdue jobs, late queues, long pauses, dead letters
// piling up, the store's own risks), each with what to do.
import * as api from '../api.js';
import { fill, h, jobLink, table, time } from '../ui.js';

export const name = 'stuck';
export const requests = 1;

// The doctor reads every running job: a slower pace than the other pages.
const EVERY_MS = 5000;

export function mount(el) {
  const list = h('div');
  const checked = h('p.muted');
  el.append(h('h1', 'Stuck and at risk'), checked, list);
  let last = 0;
  let report = null;
  async function refresh() {
    if (!report || Date.now() - last >= EVERY_MS) {
      report = await api.get('/doctor');
      last = Date.now();
    }
    fill(checked, 'Checked ', time(report.checkedAt), ` on ${report.store}.`);
    if (report.healthy) {
      fill(list, h('p#stuck-healthy', 'Nothing wrong found.'));
      return;
    }
    fill(list, table([
      ['Severity', (f) => h(`span.severity-${f.severity}`, f.severity)],
      ['What', (f) => h('span', h('code', f.code), ' ', f.message), { wrap: true }],
      ['What to do', (f) => f.advice, { wrap: true }],
      ['Queue', (f) => f.queue ?? ''],
      ['Jobs', (f) => f.ids?.length ? h('span', f.ids.map((id, i) => [i ? ', ' : '', jobLink(id)])) : (f.count ?? '')],
    ], report.findings, { id: 'stuck-table', rowData: (f) => ({ code: f.code }) }));
  }
  return { refresh };
}
