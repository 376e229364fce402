/* profiles.js: the profiles page (/): every finished profile of the data path with its
 * kind, kernel, total time, bottleneck engine and ingest time; a name filter; two ticked
 * rows open the compare page. Each row's facts are one aggregate query, its bottleneck
 * recommend's own (.../analysis?part=bounds) (docs/ui.md). */
'use strict';

/* Kind, kernel and total time of one profile, from one SELECT of scalar subqueries over
 * the tables the profile has, and its bottleneck from recommend's bounds. The instruction
 * count is the one listDbFiles gives from the footers when it has it: counting through
 * SQL makes the server cut a large Instruction table into slices (docs/memory.md). */
async function profileFacts(name) {
  const files = await NX.search(name, { type: 'listDbFiles' });
  const has = new Set(files.tables.map((t) => t.name));
  const inst = files.tables.find((t) => t.name === 'Instruction');
  const parts = ['1 AS one'];
  if (inst && (inst.rows === null || inst.rows === undefined)) parts.push('(SELECT count(*) FROM Instruction) AS instructions');
  if (has.has('SystemProfileEvents'))
    parts.push('(SELECT count(*) FROM SystemProfileEvents) AS fw_events',
      '(SELECT max(end_ts) - min(start_ts) FROM SystemProfileEvents WHERE duration_ns > 0) AS fw_span_ns',
      '(SELECT min(instance_id) FROM SystemProfileEvents) AS fw_instance');
  if (has.has('Summary')) parts.push('(SELECT total_time FROM Summary LIMIT 1) AS total_time');
  if (has.has('ExecutionInfo')) parts.push('(SELECT neff_name FROM ExecutionInfo LIMIT 1) AS kernel');
  const f = await NX.query(name, 'SELECT ' + parts.join(', ')).then((r) => NX.objects(r)[0]);
  if (inst && f.instructions === undefined) f.instructions = inst.rows;
  /* the bottleneck as recommend names it, from recommend itself (one definition) */
  f.bottleneck = f.instructions > 0 ? await NX.get(NX.profileBase(name) + '/analysis?part=bounds')
    .then((r) => r.report.bottleneck).catch(() => null) : null;
  const device = f.instructions > 0, fw = f.fw_events > 0;
  f.kind = device && fw ? 'device + framework' : fw ? 'framework' : 'device';
  f.total_ns = f.total_time !== null && f.total_time !== undefined ? f.total_time * 1e9 : fw ? f.fw_span_ns : null;
  if (!f.kernel && fw) f.kernel = f.fw_instance;
  return f;
}

async function profilesPage() {
  document.title = 'Profiles · Neuron Explorer';
  setChrome([], []);
  const filter = el('input', { type: 'search', placeholder: 'Filter by name…', 'data-testid': 'filter', style: 'width:280px' });
  const count = el('span', { class: 'muted' });
  const picked = [];
  const cmp = el('button', { 'data-testid': 'compare', disabled: true, title: 'Tick two profiles to compare them',
    onclick: () => go(NX.compareUrl(picked[0], picked[1])) }, 'Compare');
  const hint = el('span', { class: 'muted', style: 'font-size:12px' }, 'Tick two profiles to compare them.');
  const body = el('tbody');
  const table = el('table', { class: 'grid', 'data-testid': 'profiles' },
    el('thead', {}, el('tr', {}, ['', 'Name', 'Kind', 'Kernel', 'Total time', 'Bottleneck engine', 'Ingested', 'Tables']
      .map((h, i) => el('th', { class: i === 4 || i === 7 ? 'num' : '' }, h)))), body);
  const card = el('div', { class: 'card' },
    el('div', { class: 'toolbar' }, filter, count, el('span', { class: 'spacer' }), hint, cmp), table);
  main.replaceChildren(el('h1', {}, 'Profiles'), card);
  let list;
  try { list = (await NX.get('/api/v1/profiles')).profiles; } catch (e) { card.append(errorBox(e)); return; }
  if (!list.length) {
    card.replaceChildren(el('p', { class: 'muted' }, 'No profiles yet. Ingest one with ',
      el('span', { class: 'mono' }, 'neuron-explorer view -n KERNEL.neff -s PROFILE.ntff --data-path DIR'), '.'));
    return;
  }
  const boxes = new Map();
  const syncPick = () => {
    for (const [n, b] of boxes) b.checked = picked.includes(n);
    cmp.disabled = picked.length !== 2;
    cmp.textContent = picked.length === 2 ? `Compare ${picked[0]} → ${picked[1]}` : 'Compare';
    hint.hidden = picked.length === 2;
  };
  const rows = list.map((p) => {
    const cells = { kind: el('td'), kernel: el('td', { class: 'mono' }), total: el('td', { class: 'num' }), bottleneck: el('td') };
    const href = NX.profileUrl(p.name);
    const box = el('input', { type: 'checkbox', 'data-testid': 'pick', title: 'Compare this profile',
      onchange: (ev) => {
        const i = picked.indexOf(p.name);
        if (ev.target.checked && i < 0) { picked.push(p.name); if (picked.length > 2) picked.shift(); }
        if (!ev.target.checked && i >= 0) picked.splice(i, 1);
        syncPick();
      } });
    boxes.set(p.name, box);
    const tr = el('tr', { class: 'clickable', 'data-name': p.name,
      onclick: (ev) => { if (!ev.target.closest('a, input')) go(href); } },
      el('td', { style: 'width:28px' }, box),
      el('td', {}, el('a', { href, 'data-nav': true }, p.name),
        p.has_source_code ? el('span', { class: 'badge quiet', style: 'margin-left:6px', title: 'A source archive is attached' }, 'source') : null),
      cells.kind, cells.kernel, cells.total, cells.bottleneck,
      el('td', { class: 'muted' }, p.updated.replace('T', ' ').replace('Z', ' UTC')), el('td', { class: 'num' }, p.table_count));
    profileFacts(p.name).then((f) => {
      cells.kind.replaceChildren(el('span', { class: 'badge ' + (f.kind === 'framework' ? 'framework' : '') }, f.kind));
      cells.kernel.textContent = f.kernel || '–';
      cells.total.textContent = f.total_ns !== null ? NX.fmtNs(f.total_ns) : '–';
      cells.bottleneck.textContent = f.bottleneck ? NX.engineName(f.bottleneck) : '–';
    }).catch((e) => { cells.kind.replaceChildren(el('span', { class: 'muted', title: e.message }, 'unreadable')); });
    return tr;
  });
  const apply = () => {
    const q = filter.value.trim().toLowerCase();
    let n = 0;
    for (const r of rows) { const show = !q || r.dataset.name.toLowerCase().includes(q); r.hidden = !show; n += show; }
    count.textContent = `${n} of ${rows.length} profiles`;
  };
  filter.addEventListener('input', apply);
  body.append(...rows);
  apply();
}
