/* links.js: the URLs the pages link to each other by, in one place (docs/ui.md, "Links
 * between pages"), and the rule that ties an instruction to a source line. */
'use strict';

/* The source line of an instruction, as the Instruction table spells it ("dir/f.py:12"):
 * the BIR debug location, else the NKI one. The timeline's highlight uses the same rule. */
NX.LOC_SQL = 'coalesce(bir_debug_info_source_location, nki_source_location)';

/* A SQL string literal. */
NX.sqlStr = (s) => `'${String(s).replace(/'/g, "''")}'`;

NX.profileUrl = (name) => '/profile/' + NX.enc(name);
NX.sqlUrl = (name) => NX.profileUrl(name) + '/sql';
NX.compareUrl = (a, b) => `/compare/${NX.enc(a)}/${NX.enc(b)}`;

/* The source view. loc is a location as the profile or a finding spells it ("f.py:12",
 * resolved against the archive's paths) or {file, line} with an archive path. */
NX.sourceUrl = function (name, loc) {
  const base = NX.profileUrl(name) + '/source';
  if (!loc) return base;
  const q = new URLSearchParams(typeof loc === 'string' ? { loc } : { file: loc.file, line: loc.line || '' });
  return base + '?' + q.toString();
};

/* The timeline, showing [t0, t1) (profile nanoseconds: numbers, or exact integer text for
 * times beyond 2^53) with the instructions of one source location and the DMA transfers
 * they triggered highlighted: highlight is a value of NX.LOC_SQL, exactly as in the table;
 * or with the matches of a search marked: search is a text of the search box
 * ("Instruction.raw_bir_id = 12"). */
NX.timelineUrl = function (name, v) {
  const h = new URLSearchParams();
  const t = (x, round) => (typeof x === 'number' ? String(round(x)) : String(x)); /* exact text kept */
  if (v && v.t0 !== undefined && v.t1 !== undefined && NX.big(t(v.t1, Math.ceil)) > NX.big(t(v.t0, Math.floor))) {
    h.set('t0', t(v.t0, Math.floor)); h.set('t1', t(v.t1, Math.ceil));
  }
  if (v && v.highlight) h.set('highlight', v.highlight);
  if (v && v.search) h.set('search', v.search);
  const s = h.toString();
  return NX.profileUrl(name) + (s ? '#' + s : '');
};

/* Splits "path/f.py:12" into {file, line}; line is null when there is none. */
NX.splitLoc = function (loc) {
  const m = /^(.*):(\d+)(?::\d+)?$/.exec(String(loc));
  return m ? { file: m[1], line: Number(m[2]) } : { file: String(loc), line: null };
};
