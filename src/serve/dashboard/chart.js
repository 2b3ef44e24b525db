// Bar charts as inline SVG (built with createElementNS, no library): the overview's jobs finished per
// minute, and a sparkline per queue.
const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) el.append(c);
  return el;
}

/** A bar chart of `series` (oldest first), one bar a bucket; `label(i)` names bucket i. */
export function bars(series, { label, width = 1000, height = 180 } = {}) {
  const left = 36, bottom = 18, top = 6;
  const max = Math.max(1, ...series);
  const w = (width - left) / Math.max(1, series.length);
  const plot = height - bottom - top;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img',
    'aria-label': `jobs finished per bucket, at most ${max}` });
  chart.append(svg('line', { x1: left, y1: top + plot, x2: width, y2: top + plot, class: 'axis' }));
  chart.append(svg('text', { x: left - 4, y: top + 8, 'text-anchor': 'end' }, String(max)));
  chart.append(svg('text', { x: left - 4, y: top + plot, 'text-anchor': 'end' }, '0'));
  series.forEach((n, i) => {
    const bh = (n / max) * plot;
    const bar = svg('rect', { x: left + i * w + 0.5, y: top + plot - bh, width: Math.max(1, w - 1), height: bh, class: 'bar' });
    bar.append(svg('title', {}, `${label ? label(i) : i}: ${n}`));
    chart.append(bar);
  });
  if (label && series.length) {
    // First, middle and last bucket; the ends anchored inwards so their labels are not cut off.
    const ends = [[0, 'start'], [Math.floor(series.length / 2), 'middle'], [series.length - 1, 'end']];
    for (const [i, anchor] of ends) {
      const x = anchor === 'start' ? left + i * w : anchor === 'end' ? left + (i + 1) * w : left + i * w + w / 2;
      chart.append(svg('text', { x, y: height - 4, 'text-anchor': anchor }, label(i)));
    }
  }
  return chart;
}

/** A small chart without axes, for a table cell. */
export function spark(series) {
  const width = 120, height = 24;
  const max = Math.max(1, ...series);
  const w = width / Math.max(1, series.length);
  const el = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'spark', preserveAspectRatio: 'none' });
  el.append(svg('title', {}, `${series.reduce((a, b) => a + b, 0)} finished, at most ${max} a minute`));
  series.forEach((n, i) => {
    const bh = (n / max) * height;
    if (bh > 0) el.append(svg('rect', { x: i * w, y: height - bh, width: Math.max(0.5, w - 0.3), height: bh, class: 'bar' }));
  });
  return el;
}
