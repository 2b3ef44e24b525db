// A flow drawn as inline SVG (createElementNS, no library): the jobs of a job's graph in columns by
// depth (a job stands one column right of the deepest job it waits for), each a box with its type
// and status that links to its page, and an arrow per edge from the dependency to the dependent,
// drawn by where it stands (open dashed, met solid, broken red). The job of the page is outlined.
const NS = 'http://www.w3.org/2000/svg';
const BOX_W = 168, BOX_H = 40, GAP_X = 56, GAP_Y = 14, PAD = 8;

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

/** Each job's column: the length of the longest chain of dependencies behind it. */
export function depths(ids, edges) {
  const waitsFor = new Map(ids.map((id) => [id, []]));
  for (const e of edges) waitsFor.get(e.dependent)?.push(e.dependency);
  const depth = new Map();
  const visiting = new Set();
  const of = (id) => {
    if (depth.has(id)) return depth.get(id);
    // A cycle cannot be enqueued; should one be read, it is cut rather than followed for ever.
    if (visiting.has(id)) return 0;
    visiting.add(id);
    let d = 0;
    for (const dep of waitsFor.get(id) ?? []) if (waitsFor.has(dep)) d = Math.max(d, of(dep) + 1);
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const id of ids) of(id);
  return depth;
}

/** The graph `g` (as `GET /api/v1/jobs/{id}/graph` answers) as an SVG element. */
export function flow(g) {
  const ids = g.jobs.map((j) => j.id);
  const depth = depths(ids, g.edges);
  const columns = [];
  for (const job of g.jobs) (columns[depth.get(job.id)] ??= []).push(job);
  // Within a column, by the mean row of the jobs each waits for (fewer crossings), then by id.
  const row = new Map();
  columns.forEach((column) => {
    const mean = (job) => {
      const rows = g.edges.filter((e) => e.dependent === job.id && row.has(e.dependency)).map((e) => row.get(e.dependency));
      return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : 0;
    };
    column.sort((a, b) => mean(a) - mean(b) || (a.id < b.id ? -1 : 1));
    column.forEach((job, i) => row.set(job.id, i));
  });
  const tallest = Math.max(1, ...columns.map((c) => c.length));
  const width = PAD * 2 + columns.length * BOX_W + (columns.length - 1) * GAP_X;
  const height = PAD * 2 + tallest * BOX_H + (tallest - 1) * GAP_Y;
  const at = (id) => ({ x: PAD + depth.get(id) * (BOX_W + GAP_X), y: PAD + row.get(id) * (BOX_H + GAP_Y) });
  const el = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'flow', role: 'img',
    'aria-label': `a flow of ${g.jobs.length} jobs and ${g.edges.length} edges` });
  el.append(svg('defs', {}, svg('marker', { id: 'flow-arrow', viewBox: '0 0 8 8', refX: 8, refY: 4,
    markerWidth: 8, markerHeight: 8, orient: 'auto' }, svg('path', { d: 'M0,0 L8,4 L0,8 z', class: 'arrow' }))));
  for (const e of g.edges) {
    if (!depth.has(e.dependency) || !depth.has(e.dependent)) continue;
    const from = at(e.dependency), to = at(e.dependent);
    const x1 = from.x + BOX_W, y1 = from.y + BOX_H / 2, x2 = to.x, y2 = to.y + BOX_H / 2;
    const bend = Math.max(24, (x2 - x1) / 2);
    const path = svg('path', { d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`,
      class: `edge edge-${e.state}`, 'marker-end': 'url(#flow-arrow)' });
    path.dataset.dependency = e.dependency;
    path.dataset.dependent = e.dependent;
    path.dataset.state = e.state;
    path.append(svg('title', {}, `${e.dependent} waits for ${e.dependency} (on ${e.on}): ${e.state}`));
    el.append(path);
  }
  for (const job of g.jobs) {
    const { x, y } = at(job.id);
    const node = svg('a', { href: `#/jobs/${encodeURIComponent(job.id)}`, class: 'node' });
    node.dataset.jobId = job.id;
    node.dataset.status = job.status;
    node.append(
      svg('title', {}, `${job.id}: ${job.jobType} (${job.queue}), ${job.status}`),
      svg('rect', { x, y, width: BOX_W, height: BOX_H, rx: 4,
        class: `box status-${job.status}${job.id === g.id ? ' this' : ''}` }),
      svg('text', { x: x + 8, y: y + 16, class: 'type' }, clip(job.jobType, 24)),
      svg('text', { x: x + 8, y: y + 32, class: 'state' }, job.status));
    el.append(node);
  }
  return el;
}

function clip(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}
