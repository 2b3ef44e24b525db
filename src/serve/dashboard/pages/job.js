// One job: its payload, meta, result, error history, progress and times, live while it is not
// finished; the jobs it waits for and those that wait for it, with their statuses, how far along
// they are (a batch's progress), and the whole flow it belongs to drawn as a graph; cancel, retry
// or replay, delete, and resolve a waiting job (succeed, fail, retry later, discard).
import * as api from '../api.js';
import { flow } from '../graph.js';
import { action, fill, h, jobLink, pretty, span, statusBadge, table, time } from '../ui.js';

export const name = 'jobs';
// The job, and for a job with edges its flow (while the flow has a live job).
export const requests = 2;

const LIVE = ['blocked', 'pending', 'running', 'waiting'];
const ENDED = ['succeeded', 'dead', 'cancelled', 'discarded', 'expired'];

/** What an enqueue of the job's key does while it holds it: "coalesce", "debounce 30s, max wait 5m". */
function uniqueMode(job) {
  switch (job.uniqueMode ?? 'coalesce') {
    case 'debounce':
      return `debounce ${span(job.debounceMs)}` + (job.maxWaitMs == null ? '' : `, max wait ${span(job.maxWaitMs)}`);
    case 'throttle':
      return `throttle ${span(job.throttleMs)}`;
    default:
      return job.uniqueMode ?? 'coalesce';
  }
}

export function mount(el, route) {
  const id = route.args[0];
  const path = `/jobs/${encodeURIComponent(id)}`;
  const body = h('div#job');
  const resolver = resolveForm(path, id);
  el.append(h('h1', 'Job ', h('code', id)), resolver.el, body);

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

  // The flow as last read: read again at each refresh while any of its jobs is live (or the job's
  // own status moved, as a retry or replay from this page moves it), never for a flow that has ended.
  let graph = null;
  let graphOf = null;
  async function refresh() {
    const job = await api.get(path);
    const linked = (job.dependencies?.length ?? 0) + (job.dependents?.length ?? 0) > 0;
    const settled = graph && graphOf === job.status && graph.jobs.every((j) => ENDED.includes(j.status));
    if (!linked) graph = null;
    else if (!settled) graph = await api.get(`${path}/graph`);
    graphOf = job.status;
    resolver.show(job.status === 'waiting');
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
        h('dt', 'Expires'), h('dd#job-expires', job.expiresAt == null ? 'never'
          : [time(job.expiresAt, now), job.status === 'expired' ? h('span.muted', ' (not started by then)') : '']),
        h('dt', 'Started'), h('dd', time(job.startedAt, now)),
        h('dt', 'Heartbeat'), h('dd', time(job.heartbeatAt, now)),
        h('dt', 'Finished'), h('dd', time(job.finishedAt, now)),
        h('dt', 'Run time'), h('dd', ran),
        h('dt', 'Worker'), h('dd', job.workerId ?? '—'),
        h('dt', 'Unique key'), h('dd#job-unique', job.uniqueKey == null ? '—'
          : [job.uniqueKey, h('span.muted', ` (${uniqueMode(job)})`)]),
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
      ], [...(job.errors ?? [])].reverse(), { id: 'job-errors', empty: 'No errors.' }),
      waitedFor(job.dependencies ?? [], graph, id),
      graph ? h('div#job-flow', h('h2', 'Flow'), h('div.flow-wrap', flow(graph)),
        graph.truncated ? h('p.muted', `The first ${graph.jobs.length} jobs of a larger flow.`) : '') : '',
      edges(job.join === 'any' ? 'Waits for any of (runs at the first met)' : 'Waits for', 'job-dependencies', job.dependencies),
      edges('Waited for by', 'job-dependents', job.dependents));
  }
  return { refresh };
}

// One side of a job's edges, when it has any: the job at the other end (a link, with its status
// now), the rule it waits by, and where the edge stands (open, met or broken).
function edges(title, id, side) {
  if (!side?.length) return '';
  return h('div',
    h('h2', title),
    table([
      ['Job', (e) => jobLink(e.jobId)],
      ['Type', (e) => e.jobType ?? '—'],
      ['Status', (e) => (e.status ? statusBadge(e.status) : h('span.muted', 'deleted'))],
      ['On', (e) => e.on],
      ['Edge', (e) => e.state],
    ], side, { id, rowData: (e) => ({ jobId: e.jobId, edge: e.state }) }));
}

// How far along the jobs a job waits for are (a batch's members, for its callback): a bar by status
// and the counts, with the batch's on-failure job when it has one. Shown from two of them on.
function waitedFor(deps, graph, id) {
  if (deps.length < 2) return '';
  const counts = {};
  for (const d of deps) counts[d.status ?? 'deleted'] = (counts[d.status ?? 'deleted'] ?? 0) + 1;
  const ended = deps.filter((d) => !d.status || ENDED.includes(d.status)).length;
  const order = ['succeeded', 'dead', 'discarded', 'cancelled', 'expired', 'deleted', 'running', 'waiting', 'pending', 'blocked'];
  const shown = order.filter((s) => counts[s]);
  const meter = h('div.meter', { role: 'img', 'aria-label': `${ended} of ${deps.length} ended` },
    shown.map((s) => {
      const part = h(`span.status-${s}`, { title: `${counts[s]} ${s}` });
      // Through the CSSOM: the page's policy refuses style attributes.
      part.style.width = `${(100 * counts[s]) / deps.length}%`;
      return part;
    }));
  const alert = graph?.jobs.find((j) => j.id === `${id}.on-failure`);
  return h('div#job-batch', { dataset: { ended, members: deps.length } },
    h('h2', 'Progress of what it waits for'),
    meter,
    h('p', `${ended} of ${deps.length} ended: `, shown.map((s) => `${counts[s]} ${s}`).join(', '),
      alert ? h('span', '; on failure ', jobLink(alert.id), ' is ', statusBadge(alert.status)) : ''));
}

// What each way of resolving sends, and what its one field asks for.
const RESOLUTIONS = {
  succeed: { field: 'Result (JSON, optional)', body: (v) => ({ action: 'succeed', result: v.trim() ? JSON.parse(v) : null }), done: 'Succeeded' },
  fail: { field: 'Error', body: (v) => ({ action: 'fail', error: v.trim() || 'failed from the dashboard' }), done: 'Failed: dead now' },
  retry: { field: 'Delay (e.g. 30s, optional)', body: (v) => ({ action: 'retry', delay: v.trim() || null }), done: 'Retried: pending again' },
  discard: { field: 'Reason (optional)', body: (v) => ({ action: 'discard', reason: v.trim() || null }), done: 'Discarded' },
};

// The resolve box of a waiting job. Built once and only shown or hidden by refresh, so what the
// operator types survives the page's refreshes.
function resolveForm(path, id) {
  const choice = h('select#job-resolve-action', { 'aria-label': 'Resolution' },
    Object.keys(RESOLUTIONS).map((k) => h('option', { value: k }, k)));
  const label = h('span.muted');
  const value = h('input#job-resolve-value', { type: 'text', autocomplete: 'off' });
  const relabel = () => {
    label.textContent = RESOLUTIONS[choice.value].field;
    value.setAttribute('aria-label', RESOLUTIONS[choice.value].field);
  };
  choice.addEventListener('change', relabel);
  relabel();
  const button = action('Resolve', async () => {
    const how = RESOLUTIONS[choice.value];
    let body;
    try {
      body = how.body(value.value);
    } catch (e) {
      throw new Error(`the result is not JSON: ${e.message}`);
    }
    await api.post(`${path}/resolve`, body);
    value.value = '';
    return `${how.done}: job ${id}`;
  }, { id: 'job-resolve', confirm: () => `${choice.value[0].toUpperCase()}${choice.value.slice(1)} waiting job ${id}?` });
  // `.act`: hidden from a read token, like every button that acts.
  const el = h('div.card.act#job-resolve-box', { hidden: true },
    h('h2', 'Resolve this waiting job'),
    h('div.actions', choice, h('label', label, ' ', value), button));
  return { el, show: (on) => { el.hidden = !on; } };
}
