/* details.js: the details drawer of the profile page (docs/ui.md): every field of the
 * selected event's row with its SchemaFields description, for every table a timeline
 * row shows: Instruction, DmaPacketAggregated, DmaPacket and SystemProfileEvents (whose
 * events have no core: the row is found by id with the core IS NOT DISTINCT FROM the
 * event's), and for a value track the sample in force at the pointer (SbufUsage,
 * PsumUsage, HbmUsage, DmaUsage, PendingDma, SemaphoreUpdate). Times are shown exact, and
 * relative to the profile's start. It opens on a selection and closes with × or Esc. */
'use strict';

/* The SQL of the row behind a selection h of timeline tl: {table, sql}. */
function detailsQuery(h, tl) {
  const core = h.track.core === null || h.track.core === undefined ? 'NULL' : String(Number(h.track.core));
  if (h.counter) {
    const sem = /^sem (.*)$/.exec(h.track.track);
    const table = sem ? 'SemaphoreUpdate' : h.track.track;
    return { table, sql: `SELECT * FROM "${table.replace(/"/g, '""')}" WHERE pcore_idx IS NOT DISTINCT FROM ${core}` +
      (sem ? ` AND id::VARCHAR = ${NX.sqlStr(sem[1])}` : '') +
      ` AND timestamp <= ${tl.abs(h.at)} ORDER BY timestamp DESC LIMIT 1` };
  }
  const id = String(h.id);
  if (!NX.isIntText(id)) throw new Error(`the event's id '${id}' is not an integer`);
  return { table: h.table, sql: `SELECT * FROM "${h.table}" WHERE id = ${id} AND pcore_idx IS NOT DISTINCT FROM ${core} LIMIT 1` };
}

/* A field's value as text: times exact with their offset from the profile's start,
 * other units formatted, JSON pretty. */
function detailsValue(v, f, c, tl) {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'object') return JSON.stringify(v);
  if (f.unit === 'nanoseconds' && /(_ts|^timestamp)$/.test(c.name))
    return `${NX.fmtNsExact(tl.rel(v))} from the start (${v})`;
  if (f.unit === 'nanoseconds') return `${NX.fmtNsExact(v)} (${NX.fmtNs(Number(v))})`;
  if (c.name === 'extra_attributes_json' && typeof v === 'string') {
    try { return JSON.stringify(JSON.parse(v), null, 1); } catch (e) { return v; }
  }
  return f.unit ? NX.fmtUnit(v, f.unit) : String(v);
}

/* Fills drawer (an element with a .drawer-body) for the selection h; null closes it. */
async function showDetails(name, drawer, h, tl) {
  const body = drawer.querySelector('.drawer-body'), title = drawer.querySelector('.drawer-title');
  document.body.classList.toggle('drawer-open', !!h); /* the page makes room for it */
  if (!h) { drawer.classList.remove('open'); return; }
  drawer.classList.add('open');
  const mine = drawer.token = (drawer.token || 0) + 1;
  title.textContent = 'Details';
  body.replaceChildren(NX.el('p', { class: 'muted' }, 'Loading…'));
  try {
    const q = detailsQuery(h, tl);
    const [res, schema] = await Promise.all([NX.query(name, q.sql), NX.schema(name, q.table).catch(() => ({ fields: [] }))]);
    if (mine !== drawer.token) return;
    const row = NX.objects(res)[0];
    if (!row) throw new Error(h.counter ? `no ${q.table} sample at or before this time` : `no ${q.table} row with id ${h.id}`);
    const desc = new Map(schema.fields.map((f) => [f.name, f]));
    title.textContent = h.counter ? `${q.table} sample` : `${q.table} ${h.id}`;
    const what = h.counter
      ? [el('span', { class: 'badge', 'data-testid': 'detail-label' }, h.track.track), ' ',
        el('span', { class: 'muted' }, `value ${counterValue(h.track.track, h.value === null ? 0 : h.value)}`)]
      : [el('span', { class: 'badge', 'data-testid': 'detail-label', style: `--c:${NX.color(h.label)}` }, String(h.label)), ' ',
        el('span', { class: 'muted' }, `${h.track.stream}${h.track.lane ? ` · depth ${h.track.lane}` : ''} · ` +
          `${NX.fmtNsExact(h.end - h.start)}`),
        h.bins ? el('span', { class: 'muted' }, ` · longest of ${h.count} events in its bucket`) : null];
    body.replaceChildren(el('p', { style: 'margin:0 0 8px' }, ...what),
      ...(h.counter ? [] : [tl.depsSection(h)]),
      el('table', { class: 'grid', 'data-testid': 'details' }, el('tbody', {}, res.columns.map((c) => {
        const f = desc.get(c.name) || {};
        const v = detailsValue(row[c.name], f, c, tl);
        return el('tr', { 'data-field': c.name }, el('td', {}, c.name),
          el('td', {}, el(c.name === 'extra_attributes_json' ? 'pre' : 'div', { class: 'mono' }, v),
            f.description ? el('div', { class: 'desc' }, f.description) : null));
      }))));
  } catch (e) {
    if (mine === drawer.token) body.replaceChildren(errorBox(e));
  }
}

/* The drawer element: a title, a close button, a body. */
function detailsDrawer(onClose) {
  return el('aside', { class: 'drawer', 'data-testid': 'details-panel', 'aria-label': 'Details' },
    el('div', { class: 'drawer-head' }, el('h2', { class: 'drawer-title', style: 'margin:0' }, 'Details'),
      el('span', { class: 'spacer' }),
      el('button', { class: 'secondary', 'data-testid': 'details-close', title: 'Close (Esc)', onclick: onClose }, '×')),
    el('div', { class: 'drawer-body' }));
}
