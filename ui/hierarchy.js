/* hierarchy.js: the IR hierarchy view, /profile/<name>/hierarchy (docs/ui.md): the
 * levels the ingest derives from the NEFF's debug info (docs/derived-tables.md, "IR
 * hierarchy"): FrameworkInstruction -> HloInstruction -> PenguinInstruction ->
 * BirInstruction -> Instruction, as a tree that opens one level at a time (each opening
 * is one SQL query through _search, at most HIER_LIMIT children). Per node: its
 * instructions, their summed duration, its time span, and a link to the timeline on
 * that span with its instructions marked (the search raw_<level>_id = id). A profile
 * whose tables are empty, or a framework trace, says so plainly. */
'use strict';

const HIER_LIMIT = 500;

/* The levels, top down: table, its id column (also the column on Instruction), name. */
const HIER_LEVELS = [
  { table: 'FrameworkInstruction', key: 'raw_framework_id', name: 'framework_name', title: 'Framework op' },
  { table: 'HloInstruction', key: 'raw_hlo_id', name: 'hlo_name', title: 'HLO op' },
  { table: 'PenguinInstruction', key: 'raw_penguin_id', name: 'penguin_name', title: 'Penguin instruction' },
  { table: 'BirInstruction', key: 'raw_bir_id', name: 'bir_name', title: 'BIR instruction' },
];

async function hierarchyPage(name) {
  document.title = `${name} · hierarchy · Neuron Explorer`;
  profileChrome(name, 'hierarchy');
  main.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  try { if (!(await profileExists(name, main))) return; } catch (e) { main.replaceChildren(errorBox(e)); return; }
  const box = el('div', { class: 'card' });
  main.replaceChildren(el('div', { class: 'page-head' }, el('h1', {}, name),
    el('span', { class: 'muted' }, 'framework → HLO → Penguin → BIR → instruction')), box);
  let counts;
  try {
    const files = new Set((await NX.search(name, { type: 'listDbFiles' })).tables.map((t) => t.name));
    const parts = ['1 AS one'];
    for (const l of HIER_LEVELS.concat([{ table: 'Instruction' }, { table: 'SystemProfileEvents' }]))
      if (files.has(l.table)) parts.push(`(SELECT count(*) FROM ${l.table}) AS "${l.table}"`);
    counts = NX.objects(await NX.query(name, 'SELECT ' + parts.join(', ')))[0];
  } catch (e) { box.replaceChildren(errorBox(e)); return; }
  const n = (t) => Number(counts[t] || 0);
  const levelCounts = el('p', { class: 'muted', 'data-testid': 'hier-counts' }, HIER_LEVELS.map((l) =>
    `${l.table} ${NX.fmtNum(n(l.table))}`).join(' · ') + ` · Instruction ${NX.fmtNum(n('Instruction'))}`);
  if (!n('Instruction')) {
    box.replaceChildren(el('h2', {}, 'IR hierarchy'), el('p', { 'data-testid': 'hier-none' },
      n('SystemProfileEvents') ? 'A framework trace has no device instructions and no IR levels: the nesting of its events is on the timeline, one depth lane per level.'
        : 'This profile has no instructions, so no IR hierarchy.'));
    return;
  }
  if (!n(HIER_LEVELS[0].table)) {
    box.replaceChildren(el('h2', {}, 'IR hierarchy'), el('p', { 'data-testid': 'hier-none' },
      'The instructions of this profile carry no IR ids (its NEFF has no debug info), so the hierarchy tables ' +
      '(FrameworkInstruction, HloInstruction, PenguinInstruction, BirInstruction) are empty. The timeline and the ' +
      'source view show the instructions themselves.'), levelCounts);
    return;
  }
  const single = n('FrameworkInstruction') === 1 && n('HloInstruction') === 1;
  const tbody = el('tbody', {});
  box.replaceChildren(el('h2', {}, 'IR hierarchy'), levelCounts,
    single ? el('p', { 'data-testid': 'hier-kernel-only' }, 'This is the profile of one kernel: its framework and HLO levels are one node each ' +
      '(the kernel function and the custom call that runs it), the kernel\'s own structure starts at the Penguin level.') : null,
    el('table', { class: 'grid hier', 'data-testid': 'hierarchy' },
      el('thead', {}, el('tr', {}, ['name', 'level', 'instructions', 'busy', 'span', 'start', ''].map((h, i) =>
        el('th', { class: i > 1 && i < 6 ? 'num' : '' }, h)))), tbody));
  const view = new HierarchyView(name, tbody);
  window.nx = { hierarchy: view };
  await view.open(null).catch((e) => box.append(errorBox(e)));
  /* a lone chain of single nodes opens down to where it branches */
  for (let row = tbody.firstChild, k = 0; row && k < 3 && tbody.children.length === k + 1; row = tbody.lastChild, k++)
    await view.open(row.node).catch((e) => box.append(errorBox(e)));
}

class HierarchyView {
  constructor(profile, tbody) { this.profile = profile; this.tbody = tbody; this.origin = null; }

  /* The children of node (null: the top level) as rows below it; a second call closes. */
  async open(node) {
    if (node && node.rows) { for (const r of node.rows) this.close(r); node.rows = null; node.tr.classList.remove('open'); return; }
    if (this.origin === null) this.origin = (await NX.deviceBounds(this.profile)).origin;
    const depth = node ? node.depth + 1 : 0;
    const where = node ? `WHERE ${node.level.key} = ${node.id}` : '';
    let kids;
    if (depth < HIER_LEVELS.length) {
      const l = HIER_LEVELS[depth];
      const r = NX.objects(await NX.query(this.profile,
        `SELECT h.${l.key}::VARCHAR AS id, h.${l.name}::VARCHAR AS name, h.start_ts::VARCHAR AS s, h.end_ts::VARCHAR AS e, ` +
        `c.n, c.busy, count(*) OVER () AS total FROM ${l.table} h JOIN (SELECT ${l.key} AS k, count(*) AS n, ` +
        `sum(duration_ns) AS busy FROM Instruction ${where} GROUP BY 1) c ON c.k = h.${l.key} ` +
        `${where.replace('WHERE ', 'WHERE h.')} ORDER BY h.start_ts, h.${l.key} LIMIT ${HIER_LIMIT}`));
      kids = r.map((x) => ({ level: l, depth, id: x.id, name: x.name, s: x.s, e: x.e, n: x.n, busy: x.busy, total: x.total }));
    } else {
      const r = NX.objects(await NX.query(this.profile,
        `SELECT id::VARCHAR AS id, opcode::VARCHAR AS name, engine::VARCHAR AS engine, pcore_idx AS core, ` +
        `start_ts::VARCHAR AS s, end_ts::VARCHAR AS e, duration_ns AS busy, count(*) OVER () AS total ` +
        `FROM Instruction ${where} ORDER BY start_ts, id LIMIT ${HIER_LIMIT}`));
      kids = r.map((x) => ({ level: null, depth, id: x.id, name: `${x.name} · ${x.engine}`, s: x.s, e: x.e, n: 1, busy: x.busy, total: x.total }));
    }
    const rows = kids.map((k) => this.row(k));
    const total = kids.length ? Number(kids[0].total) : 0;
    if (total > kids.length) rows.push(el('tr', { class: 'muted' }, el('td', { colspan: 7, style: `padding-left:${12 + depth * 18}px` },
      `the first ${NX.fmtNum(kids.length)} of ${NX.fmtNum(total)} by start`)));
    if (node) { node.rows = rows; node.tr.after(...rows); node.tr.classList.add('open'); } else this.tbody.replaceChildren(...rows);
    return kids;
  }

  close(tr) { if (tr.node && tr.node.rows) { for (const r of tr.node.rows) this.close(r); tr.node.rows = null; } tr.remove(); }

  row(k) {
    const rel = (v) => Number(NX.big(v) - this.origin);
    const s = rel(k.s), e = rel(k.e), leaf = !k.level;
    const search = leaf ? `Instruction.id = ${k.id}` : `Instruction.${k.level.key} = ${k.id}`;
    const m = Math.max(20, Math.round((e - s) / 10));
    const tl = NX.timelineUrl(this.profile, { t0: (NX.big(k.s) - BigInt(m)).toString(), t1: (NX.big(k.e) + BigInt(m)).toString(), search });
    const name = el('td', { style: `padding-left:${10 + k.depth * 18}px` },
      leaf ? el('span', { class: 'mono' }, k.name)
        : el('a', { href: '#', 'data-testid': 'hier-open', onclick: (ev) => { ev.preventDefault(); this.open(k).catch((x) => tr.after(el('tr', {}, el('td', { colspan: 7 }, errorBox(x))))); } },
          el('span', { class: 'hier-arrow' }), k.name || `#${k.id}`));
    const tr = el('tr', { 'data-level': leaf ? 'Instruction' : k.level.table, 'data-id': k.id }, name,
      el('td', { class: 'muted' }, leaf ? 'instruction' : k.level.title),
      el('td', { class: 'num' }, NX.fmtNum(Number(k.n))),
      el('td', { class: 'num' }, NX.fmtNs(Number(k.busy))),
      el('td', { class: 'num' }, NX.fmtNs(e - s)),
      el('td', { class: 'num mono' }, NX.fmtNsExact(s)),
      el('td', {}, el('a', { href: tl, 'data-nav': true, 'data-testid': 'hier-timeline' }, '▸ timeline')));
    tr.node = k; k.tr = tr;
    return tr;
  }
}
