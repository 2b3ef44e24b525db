// Dead letters: replay one, a selection, or every dead job matching the filter (after a dry run
// has counted them and the user has said yes).
import * as api from '../api.js';
import { action, confirmAction, fill, flash, go, h, jobLink, params, table, time } from '../ui.js';

export const name = 'dead';
export const requests = 1;

const PAGE = 100;

export function mount(el, route) {
  const p = params(route);
  const selected = new Set();
  const filter = () => ({ queue: p.queue ? [p.queue] : [], type: p.type ? [p.type] : [] });
  const form = h('form.filters#dead-filter',
    h('label', 'Queue', h('input', { name: 'queue', value: p.queue ?? '' })),
    h('label', 'Type', h('input', { name: 'type', value: p.type ?? '' })),
    h('button.primary', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go('/dead', Object.fromEntries(new FormData(form).entries()));
  });

  const replaySelected = action('Replay selected', async () => {
    const ids = [...selected];
    const answer = await api.post('/dead/replay', { ids });
    selected.clear();
    return `Replayed ${answer.replayed.length} job(s)`;
  }, { id: 'dead-replay-selected', confirm: () => `Replay the ${selected.size} selected dead job(s)?` });

  const replayAll = h('button.act#dead-replay-all', { type: 'button' }, 'Replay all matching…');
  replayAll.addEventListener('click', async () => {
    try {
      // The same selection, counted first: the replay moves exactly these.
      const dry = await api.post('/dead/replay', { ...filter(), dryRun: true });
      const n = dry.wouldReplay.length;
      if (n === 0) return flash('No dead job matches.', true);
      const what = [p.queue && `queue ${p.queue}`, p.type && `type ${p.type}`].filter(Boolean).join(', ') || 'every queue';
      if (!(await confirmAction(`Replay ${n} dead job(s) of ${what}? They run again from now.`, `Replay ${n}`))) return;
      const answer = await api.post('/dead/replay', { ...filter(), limit: n });
      flash(`Replayed ${answer.replayed.length} job(s)`, true);
    } catch (e) {
      flash(`Replay: ${e.message}`);
    }
    window.dispatchEvent(new Event('jobq:changed'));
  });

  const count = h('span.muted');
  const list = h('div');
  el.append(h('h1', 'Dead letters'), form, h('div.actions', replaySelected, replayAll, count), list);

  async function refresh() {
    const rows = await api.get(`/jobs${api.query({ status: 'dead', queue: p.queue, type: p.type, limit: PAGE })}`);
    const ids = new Set(rows.map((j) => j.jobId));
    for (const id of selected) if (!ids.has(id)) selected.delete(id);
    const sync = () => {
      replaySelected.disabled = selected.size === 0;
      count.textContent = `${selected.size} selected${rows.length === PAGE ? ` (showing the newest ${PAGE})` : ''}`;
    };
    const box = (j) => h('input.act', {
      type: 'checkbox', checked: selected.has(j.jobId), 'aria-label': `select ${j.jobId}`,
      on: { change: (e) => { if (e.target.checked) selected.add(j.jobId); else selected.delete(j.jobId); sync(); } },
    });
    fill(list, table([
      ['', box],
      ['Id', (j) => jobLink(j.jobId)],
      ['Type', (j) => j.jobType],
      ['Queue', (j) => j.queue],
      ['Died', (j) => time(j.finishedAt)],
      ['Last error', (j) => j.errors?.at(-1)?.error ?? '', { wrap: true }],
      ['', (j) => action('Replay', async () => { await api.post('/dead/replay', { ids: [j.jobId] }); return `Replayed ${j.jobId}`; })],
    ], rows, { id: 'dead-table', rowData: (j) => ({ jobId: j.jobId }), empty: 'No dead jobs.' }));
    sync();
  }
  return { refresh };
}
