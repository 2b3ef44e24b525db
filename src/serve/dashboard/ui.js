// Small DOM helpers. Nothing here parses HTML: data (payloads, error texts, names) only ever becomes
// text nodes, so a job cannot inject markup into the page.

/** h('tag.class#id', {attrs, on: {click}}, ...children) */
export function h(spec, attrs, ...children) {
  const [, tag, rest] = /^([a-z0-9]+)(.*)$/i.exec(spec);
  const el = document.createElement(tag);
  for (const part of rest.match(/[.#][^.#]+/g) ?? []) {
    if (part[0] === '.') el.classList.add(part.slice(1)); else el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** A table: columns are [header, cell(row), {num}] ; rows get data attributes from rowData(row). */
export function table(columns, rows, { id, rowData, empty = 'Nothing here.' } = {}) {
  if (!rows.length) return h('p.muted', { id }, empty);
  return h('div.scroll', h('table', { id },
    h('thead', h('tr', columns.map(([title, , o]) => h(o?.num ? 'th.num' : 'th', title)))),
    h('tbody', rows.map((r) => h('tr', { dataset: rowData ? rowData(r) : undefined },
      columns.map(([, cell, o]) => h(o?.num ? 'td.num' : o?.wrap ? 'td.wrap' : 'td', cell(r))))))));
}

export function statusBadge(status) {
  return h(`span.status.status-${status}`, { dataset: { status } }, status);
}

export function jobLink(id) {
  return h('a', { href: `#/jobs/${encodeURIComponent(id)}`, dataset: { jobId: id } }, id);
}

/** A time: absolute in the user's zone, relative in its title. */
export function time(ms, now = Date.now()) {
  if (ms === null || ms === undefined) return h('span.muted', '—');
  const d = new Date(ms);
  return h('time', { datetime: d.toISOString(), title: ago(now - ms) }, d.toLocaleString());
}

/** A duration in milliseconds as "1h 3m", "42s". */
export function span(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return `${hrs}h ${m % 60}m`;
  return `${Math.floor(hrs / 24)}d ${hrs % 24}h`;
}

export function ago(ms) { return ms >= 0 ? `${span(ms)} ago` : `in ${span(-ms)}`; }

export function pretty(value) {
  return h('pre', value === undefined || value === null ? '—' : JSON.stringify(value, null, 2));
}

/** Replaces el's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Shows a message above the page (an error unless ok). */
export function flash(message, ok = false) {
  const el = document.getElementById('flash');
  el.textContent = message;
  el.classList.toggle('ok', ok);
  el.hidden = !message;
}

/** Asks before an action; resolves true only on "Yes". */
export function confirmAction(text, yes = 'Yes') {
  const dialog = document.getElementById('confirm-dialog');
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-yes').textContent = yes;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'yes'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}

/** A button that runs an action, shows its outcome and refreshes the page. */
export function action(label, run, { danger = false, id, confirm } = {}) {
  const button = h(danger ? 'button.act.danger' : 'button.act', { type: 'button', id }, label);
  button.addEventListener('click', async () => {
    if (confirm && !(await confirmAction(typeof confirm === 'function' ? confirm() : confirm, label))) return;
    button.disabled = true;
    try {
      const message = await run();
      flash(message ?? `${label}: done`, true);
    } catch (e) {
      flash(`${label}: ${e.message}`);
    } finally {
      button.disabled = false;
      window.dispatchEvent(new Event('jobq:changed'));
    }
  });
  return button;
}

/** The route's query parameters as an object. */
export function params(route) { return Object.fromEntries(route.query.entries()); }

/** Navigates to a page with these parameters (empty ones left out). */
export function go(path, values = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== '' && v !== undefined && v !== null) q.set(k, v);
  const s = q.toString();
  location.hash = `#${path}${s ? `?${s}` : ''}`;
}
