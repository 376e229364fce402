/* sql.js: the SQL page (/profile/<name>/sql). One SELECT through _search, shown a page at
 * a time: the query is wrapped as SELECT * FROM (q) LIMIT/OFFSET so the browser only ever
 * receives one page (plus a count); a query that cannot be wrapped runs as it is, under
 * the server's row cap, and is paged here. CSV downloads the whole result (same cap). A
 * schema browser (SchemaFields) and the seed queries (examples.js) sit beside it. */
'use strict';

const SQL_PAGE = 100;

/* A cell as the server sent it, every digit kept (the CSV has the same values): numbers
 * in their shortest exact form with the integer part grouped by thousands. */
function cellText(v) {
  if (v === null) return 'NULL';
  if (typeof v === 'object') return JSON.stringify(v);
  if (typeof v !== 'number') return String(v);
  const t = String(v);
  if (/e/i.test(t) || !isFinite(v)) return t;
  const [i, f] = t.split('.');
  return i.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (f !== undefined ? '.' + f : '');
}

function resultTable(res, rows) {
  const num = res.columns.map((_, i) => rows.some((r) => typeof r[i] === 'number'));
  return el('table', { class: 'grid', 'data-testid': 'result' },
    el('thead', {}, el('tr', {}, res.columns.map((c, i) => el('th', { title: c.type, class: num[i] ? 'num' : '' }, c.name)))),
    el('tbody', {}, rows.map((r) => el('tr', {}, r.map((v, i) =>
      el('td', { class: v === null ? 'null' : typeof v === 'number' ? 'num' : 'mono' }, cellText(v)))))));
}

/* RFC 4180 CSV of a _search result; numbers and strings as the server sent them. */
function toCsv(res) {
  const q = (v) => {
    if (v === null || v === undefined) return '';
    const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [res.columns.map((c) => q(c.name)).join(','), ...res.rows.map((r) => r.map(q).join(','))].join('\r\n') + '\r\n';
}

/* The user's query without trailing semicolons, ready to nest in a subquery. */
const stripSql = (q) => q.replace(/[\s;]+$/, '');

/* Whether a query reads like a plain query that can be nested (else it runs as it is, and
 * the server judges it: a refused statement then gets the server's own refusal). */
const nestable = (q) => /^(select|with|from|values|table|pivot|unpivot)\b/i
  .test(q.replace(/^(\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/|\()*/, ''));

async function schemaBrowser(name, ta) {
  const box = el('div', { class: 'schema', 'data-testid': 'schema' });
  const filter = el('input', { type: 'search', placeholder: 'Filter tables and fields…', style: 'width:100%;margin-bottom:8px' });
  const [files, described] = await Promise.all([NX.search(name, { type: 'listDbFiles' }),
    NX.query(name, 'SELECT table_name, any_value(table_description) AS d, count(*) AS n FROM SchemaFields GROUP BY table_name')]);
  const desc = new Map(NX.objects(described).map((r) => [r.table_name, r]));
  const insert = (text) => {
    const [a, b] = [ta.selectionStart, ta.selectionEnd];
    ta.setRangeText(text, a, b, 'end');
    ta.focus();
  };
  const items = files.tables.map((t) => {
    const d = desc.get(t.name);
    const fields = el('div', { class: 'fields' });
    const det = el('details', { 'data-table': t.name },
      el('summary', { title: d ? d.d : '' }, el('span', { class: 'mono' }, t.name), el('span', { class: 'muted' }, ` ${NX.fmtBytes(t.size_bytes)}`)),
      el('div', { class: 'tdesc muted' }, d ? d.d : 'Not in the schema.',
        ' ', el('a', { href: '#', onclick: (ev) => { ev.preventDefault(); ta.value = `SELECT * FROM ${t.name} LIMIT 1000`; ta.focus(); } }, 'SELECT *')),
      fields);
    det.addEventListener('toggle', async () => {
      if (!det.open || fields.childElementCount) return;
      try {
        const res = await NX.query(name, 'SELECT field_name, field_type, field_format, field_unit, field_description FROM SchemaFields ' +
          `WHERE table_name = ${NX.sqlStr(t.name)}`);
        fields.replaceChildren(...NX.objects(res).map((f) => el('div', { class: 'field', title: 'Insert into the query', 'data-field': f.field_name,
          onclick: () => insert(f.field_name) },
          el('span', { class: 'mono' }, f.field_name), ' ', el('span', { class: 'muted' }, [f.field_format || f.field_type, f.field_unit].filter(Boolean).join(', ')),
          f.field_description ? el('div', { class: 'desc' }, f.field_description) : null)));
        if (!res.rows.length) fields.replaceChildren(el('div', { class: 'muted' }, 'SchemaFields does not describe this table.'));
      } catch (e) { fields.replaceChildren(errorBox(e)); }
    });
    return det;
  });
  filter.addEventListener('input', () => {
    const q = filter.value.trim().toLowerCase();
    for (const d of items) d.hidden = q && !d.dataset.table.toLowerCase().includes(q) &&
      ![...d.querySelectorAll('.field')].some((f) => f.dataset.field.toLowerCase().includes(q));
  });
  box.append(filter, ...items);
  return box;
}

function sqlPage(name) {
  document.title = `SQL · ${name} · Neuron Explorer`;
  profileChrome(name, 'sql');
  const ta = el('textarea', { 'data-testid': 'sql', spellcheck: 'false' });
  ta.value = sessionStorage.getItem('nx-sql') || EXAMPLES[0][1];
  const out = el('div', { 'data-testid': 'sql-out' }, el('p', { class: 'muted' }, 'Run a query to see its result here.'));
  const info = el('span', { class: 'muted', 'data-testid': 'sql-info' });
  const pager = el('span', { class: 'pager' });
  const csv = el('button', { class: 'secondary', 'data-testid': 'csv', disabled: true, onclick: () => download() }, 'Download CSV');
  let st = null; /* {q, page, mode: 'server'|'client', res, total, rows} */

  async function show(page) {
    const s = st, t = performance.now();
    info.textContent = 'Running…';
    try {
      let res, rows, more;
      if (s.mode === 'server') {
        try {
          res = await NX.query(name, `SELECT * FROM (\n${s.q}\n) AS nx_page LIMIT ${SQL_PAGE + 1} OFFSET ${page * SQL_PAGE}`);
        } catch (e) {
          if (page !== 0) throw e;
          s.mode = 'client'; /* not nestable (or refused): run it as it is and page here */
        }
      }
      if (s.mode === 'server') {
        rows = res.rows.slice(0, SQL_PAGE); more = res.rows.length > SQL_PAGE;
      } else {
        if (!s.res) s.res = await NX.query(name, s.q);
        res = s.res; s.total = res.row_count;
        rows = res.rows.slice(page * SQL_PAGE, (page + 1) * SQL_PAGE); more = (page + 1) * SQL_PAGE < res.rows.length;
      }
      if (s !== st) return;
      s.page = page; s.more = more; s.shown = rows.length; s.ms = performance.now() - t;
      if (s.mode === 'server' && page === 0 && !more) s.total = rows.length;
      renderInfo();
      out.replaceChildren(el('div', { class: 'result-wrap' }, resultTable(res, rows)));
      csv.disabled = false;
    } catch (e) {
      if (s !== st) return;
      info.textContent = ''; pager.replaceChildren(); csv.disabled = true;
      out.replaceChildren(errorBox(e));
    }
  }

  function renderInfo() {
    const s = st, first = s.page * SQL_PAGE;
    const of = s.total !== undefined ? ` of ${NX.fmtNum(s.total)}` : ' of more';
    info.textContent = (s.shown ? `rows ${NX.fmtNum(first + 1)}–${NX.fmtNum(first + s.shown)}${of}` : 'no rows') +
      ` · ${s.ms.toFixed(0)} ms` + (s.res && s.res.truncated ? ' — ' + s.res.message : '');
    const last = s.total !== undefined ? Math.max(1, Math.ceil(s.total / SQL_PAGE)) : null;
    pager.replaceChildren(
      el('button', { class: 'secondary', 'data-testid': 'prev', disabled: s.page === 0, onclick: () => show(s.page - 1) }, '‹ Prev'),
      el('span', { class: 'muted' }, ` page ${s.page + 1}${last !== null ? ' of ' + last : ''} `),
      el('button', { class: 'secondary', 'data-testid': 'next', disabled: !s.more, onclick: () => show(s.page + 1) }, 'Next ›'));
  }

  async function run() {
    sessionStorage.setItem('nx-sql', ta.value);
    const q = stripSql(ta.value);
    const s = st = { q, page: 0, mode: nestable(q) ? 'server' : 'client' };
    await show(0);
    if (s !== st || s.mode !== 'server' || s.total !== undefined || !s.shown) return;
    try { /* the total, for the pager; a nicety, so its failure is ignored */
      const c = await NX.query(name, `SELECT count(*) AS n FROM (\n${q}\n) AS nx_count`);
      if (s !== st) return;
      s.total = c.rows[0][0];
      renderInfo();
    } catch (e) { /* ignored */ }
  }

  async function download() {
    const s = st;
    csv.disabled = true;
    try {
      const res = s.res || await NX.query(name, s.q);
      const a = el('a', { href: URL.createObjectURL(new Blob([toCsv(res)], { type: 'text/csv' })), download: `${name}-query.csv` });
      document.body.append(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
      if (res.truncated) info.textContent += ' — the CSV is cut: ' + res.message;
    } catch (e) { out.prepend(errorBox(e)); } finally { csv.disabled = false; }
  }

  ta.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); run(); } });
  const schemaCard = el('div', { class: 'card sql-side' }, el('h2', {}, 'Tables'), el('p', { class: 'muted' }, 'Loading…'));
  main.replaceChildren(el('h1', {}, 'SQL'),
    el('div', { class: 'sql-wrap' }, schemaCard,
      el('div', { class: 'sql-main' },
        el('div', { class: 'row' },
          el('div', { class: 'card', style: 'flex:2' }, ta,
            el('div', { class: 'toolbar', style: 'margin:10px 0 0' }, el('button', { 'data-testid': 'run', onclick: run }, 'Run'),
              el('span', { class: 'muted' }, el('span', { class: 'kbd' }, 'Ctrl'), '+', el('span', { class: 'kbd' }, 'Enter')),
              el('span', { class: 'spacer' }), el('span', { class: 'muted', style: 'font-size:12px' }, 'One read-only SELECT; every table of the profile is a view by its name.'))),
          el('div', { class: 'card', style: 'flex:1' }, el('h2', {}, 'Examples'),
            el('ul', { class: 'examples', 'data-testid': 'examples' }, EXAMPLES.map(([title, q]) => el('li', {},
              el('a', { href: '#', title: q, onclick: (ev) => { ev.preventDefault(); ta.value = q; run(); } }, title)))))),
        el('div', { class: 'card' }, el('div', { class: 'toolbar' }, info, el('span', { class: 'spacer' }), pager, csv), out))));
  schemaBrowser(name, ta).then((b) => schemaCard.replaceChildren(el('h2', {}, 'Tables'), b))
    .catch((e) => schemaCard.replaceChildren(el('h2', {}, 'Tables'), errorBox(e)));
}
