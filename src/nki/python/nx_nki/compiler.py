"""compiler.py: the decisions the real NKI compiler makes, as deterministic passes over a
recorded trace (docs/nki.md, "Compiler decisions").

0. loop order: a perfect nest of affine_range loops whose SBUF tiles do not fit runs in the
   order of its loops that reloads the fewest bytes (interchange.py, `loop_order`).
0a. hoisting: a computed tile whose whole content repeats an earlier tile's (loop-invariant
   work in the unrolled trace) is that tile while the kept tiles fit SBUF (invariant.py).
0b. re-loads: when the live tiles fit SBUF but not with a second buffer for the sites that
   stream one tile at a time, a block of loaded tiles held over a loop is re-loaded, just
   the bytes each read needs, before every instruction reading it; reads of one tile that
   can be brought together share a load (remat.py).
1. picks: an engine for every `unknown_engine` op (copies on ScalarE; tensor_scalar and
   memset on the least busy of their candidates, never GpSimd for tensor_scalar);
   a trigger engine and a queue for every DMA (loads from Sync, stores from the engine that
   wrote the data, one queue per source line and trigger engine, re-loads on queues of
   their own, hardware DGE for nisa.dma_copy on trn2).
2. allocate: every on-chip tile gets SBUF/PSUM space. Tiles are grouped by allocation site
   (the source line that declared them); a site gets as many buffers as it has tiles live at
   once, more (multi-buffering: `bufs`, default 3, all 8 PSUM banks shared out) where
   there is room (sites keeping loads for a later load: within `serve_sbuf`), and fewer
   only when the live tiles exceed the target's SBUF: then tiles
   are spilled to HBM (Belady: the one used furthest ahead) and reloaded before their next
   use; saves are triggered by the tile's last writer (as stores), reloads by Sync, and with
   `spill_ahead` the pool evicts ahead of need. A load of bytes a free buffer still holds
   takes that buffer instead (served.py); a new tile takes the free buffer freed longest ago,
   or at a site the served-loads budget took buffers from the one whose bytes are loaded
   again furthest ahead (`serve_reuse`).
3. sync: a dependency (RAW, WAR, WAW on overlapping bytes) between two instructions of
   different engines or DMA queues becomes a semaphore wait; waits already implied by
   earlier ones (same engine order, transitively through what each producer had waited
   for) are left out.
4. schedule: each engine's stream is reordered by estimated input readiness within a
   window, never past an instruction that touches the same buffers (`window`, default 8;
   1 keeps program order).
"""
import bisect
from collections import deque

from . import errors
from . import fuse
from . import interchange
from . import invariant
from . import remat
from . import served
from .ops import PE, DVE, ACT, POOL, SP, ENGINE_NAMES
from .policy import PSUM_BANKS, PSUM_BANK_BYTES
from .tensor import Buf

_CLK = {'trn2': (2.4, 0.96, 1.2, 1.2, 1.2), 'trn1': (2.8, 1.12, 1.4, 1.4, 1.4)}


class CompileError(errors.NkiError):
    pass


def _where(loc):
    return '%s:%d' % loc if loc else None


class Queue:
    __slots__ = ('name', 'type', 'owner', 'stream', 'sem', 'ntransfers', 'key')

    def __init__(self, name, qtype, owner, stream, key):
        self.name = name
        self.type = qtype
        self.owner = owner
        self.stream = stream
        self.sem = 0
        self.ntransfers = 0
        self.key = key


class Program:
    """A compiled kernel: instructions with addresses, waits and signals, and decisions."""

    def __init__(self, trace, pol):
        self.trace = trace
        self.pol = pol
        self.ins = []
        self.queues = []
        self.decisions = []       # (kind, loc or None, {key: value})
        self.spill = None         # the HBM spill buffer, when tiles spilled
        self.spill_save = 0
        self.spill_reload = 0
        self.spill_q = {}
        self.reload_q = {}
        self.live_sites = None    # (ins list, tiles, sites) of reload_blocks, for allocate
        self.sem_of_engine = {}


# --- 1. engine and queue picks ---------------------------------------------------------------

def _free(v):
    n = 1
    for _, c in v[3][1:]:
        n *= c
    return n


def _cost(ins, clk):
    """Estimated ns of an engine instruction (the simulator's streaming rule, roughly)."""
    op = ins.op
    if op == 'dma' or ins.eng is None:
        return 64 / clk[SP]
    v = ins.dst if ins.dst is not None else (ins.srcs[0] if ins.srcs else None)
    n = _free(v) if v is not None else 1
    e = ins.eng
    if op == 'mm':
        return max(n, 64) / clk[PE]
    f = 1.0
    if op == 'tt':
        f = 2.0
    if (ins.a.get('alu') == 'divide' or ins.a.get('op0') == 'divide') and e == DVE:
        f = 8.0
    elif op == 'recip' and e == DVE:
        f = 2.5
    if op == 'tr' and ins.srcs:
        n = _free(ins.srcs[0])
    return (max(n * f, 64) + 60) / clk[e]


# ALU operations ScalarE's tensor_scalar runs (its activation datapath: scale and bias)
_ACT_ALU = frozenset(('add', 'subtract', 'multiply', 'maximum', 'minimum'))


def _ts_engines(ins):
    """Engines for an unknown_engine tensor_scalar: Vector or Scalar, never GpSimd. The
    measured nki-calibration kernels (trn1) put them on ScalarE (adamw 62 %, silu 31 % ScalarE
    active) and leave GpSimd idle (<= 2.6 % in all seven); ScalarE takes the arithmetic ones."""
    a = ins.a
    if a.get('op0') in _ACT_ALU and a.get('op1') in _ACT_ALU | {None}:
        return (DVE, ACT)
    return (DVE,)


def _reload_queue(prog, trig, k):
    q = prog.reload_q.get((trig, k))
    if q is None:
        q = Queue('q%sReload%d' % (ENGINE_NAMES[trig], k), 'in', trig, 5 + len(prog.queues),
                  ('reload', trig, k))
        prog.queues.append(q)
        prog.reload_q[(trig, k)] = q
    return q


def pick(prog, ins_list):
    pol = prog.pol
    tr = prog.trace
    clk = _CLK[pol.target]
    busy = [0.0] * 5
    writer = {}                   # (buf id, blk) -> engine of its last writer
    queues = {}
    qsites = {}
    picks = {}
    nreload = 0
    for ins in ins_list:
        op = ins.op
        if op == 'dma':
            a = ins.a
            kind = a.get('kind')
            src = ins.srcs[0]
            trig = ins.eng
            if trig is None:
                if kind in ('store', 'chip'):
                    trig = writer.get((src[0].id, src[1])) if src[0].onchip else None
                    if trig is None or trig == PE:
                        trig = SP
                else:
                    trig = SP
                ins.eng = trig
            dge = bool(a.get('dge') is not False and a.get('api') == 'nisa.dma_copy'
                       and pol.dge and pol.target == 'trn2' and kind in ('load', 'store'))
            if kind in ('spill_save', 'spill_reload'):
                dge = False
            qtype = ('dynamic_hw' if dge else
                     {'load': 'in', 'store': 'out', 'spill_reload': 'in',
                      'spill_save': 'out'}.get(kind, 'data'))
            if a.get('reload') and qtype == 'in':
                # the compiler's re-loads (remat.py): queues of their own, taken in turn
                q = _reload_queue(prog, trig, nreload % pol.reload_queues)
                nreload += 1
                a['q'] = q
                busy[trig] += 64 / clk[trig]
                writer[(ins.dst[0].id, ins.dst[1])] = None
                continue
            sk = (trig, qtype, ins.loc)
            k = qsites.get(sk)
            if k is None:
                n = sum(1 for key in qsites if key[0] == trig and key[1] == qtype)
                k = qsites[sk] = n % pol.queues
            qk = (trig, qtype, k)
            q = queues.get(qk)
            if q is None:
                stem = {'in': 'IO', 'out': 'IO', 'data': 'Data', 'dynamic_hw': 'DGE'}[qtype]
                name = 'q%s%s%d' % (ENGINE_NAMES[trig], stem, len([1 for x in queues if
                                                                  x[0] == trig and
                                                                  (x[1] in ('in', 'out')) ==
                                                                  (qtype in ('in', 'out')) and
                                                                  (x[1] == 'dynamic_hw') ==
                                                                  (qtype == 'dynamic_hw')]))
                q = queues[qk] = Queue(name, qtype, trig, 5 + len(prog.queues), qk)
                prog.queues.append(q)
            a['q'] = q
            busy[trig] += (600.0 if qtype == 'dynamic_hw' else 64 / clk[trig])
            if ins.dst[0].onchip:
                writer[(ins.dst[0].id, ins.dst[1])] = None
            continue
        if ins.eng is None:
            if op == 'memset':
                cands = (DVE, POOL)
            elif op == 'ts':
                cands = _ts_engines(ins)
            else:
                # copies (PSUM evictions included) on ScalarE: the measured nki-calibration
                # matmul and bmm leave VectorE idle (< 0.01 %) with every copy on ScalarE
                cands = (ACT,)
            if pol.engines == 'vector':
                e = DVE
            else:
                e = cands[0]
                for c in cands[1:]:
                    if busy[c] < busy[e]:
                        e = c
            ins.eng = e
            key = (ins.loc, op)
            d = picks.get(key)
            if d is None:
                d = picks[key] = [0] * 5
            d[e] += 1
        busy[ins.eng] += _cost(ins, clk)
        if ins.dst is not None and ins.dst[0].onchip:
            writer[(ins.dst[0].id, ins.dst[1])] = ins.eng
    for (loc, op), counts in picks.items():
        prog.decisions.append(('engine', loc, {'op': op, 'engines': ','.join(
            '%s:%d' % (ENGINE_NAMES[e], c) for e, c in enumerate(counts) if c)}))
    for q in prog.queues:
        prog.decisions.append(('queue', None, {'queue': q.name, 'type': q.type,
                                               'trigger': ENGINE_NAMES[q.owner]}))
    return busy


# --- 1b. re-loads instead of a resident block --------------------------------------------

def _double_buffered(sites):
    """SBUF bytes per partition for every site's live tiles, and a second buffer for each
    site that streams its tiles one at a time (one live, several in all)."""
    return sum(s.size * (2 if s.live == 1 and s.tiles > 1 else s.live)
               for s in sites if s.kind == 'sbuf')


def _reloadable(sites, tiles, ins_list):
    """{site: {(buf, blk): (load, hbm view, hbm stride)}} of the SBUF sites holding several
    live tiles that are each filled once by a whole-tile load from an HBM tensor the kernel
    never writes, and only read afterwards."""
    written = set()
    for ins in ins_list:
        if ins.dst is not None and ins.dst[0].kind == 'hbm':
            written.add(id(ins.dst[0]))
    out = {}
    bad = set()
    for key, t in tiles.items():
        s = t[2]
        if s.kind != 'sbuf' or s.live < 2 or s in bad:
            continue
        ld = ins_list[t[0]]
        r = remat.loaded_whole(ld) if ld.dst is not None and (ld.dst[0], ld.dst[1]) == key \
            else None
        if r is None or id(r[0][0]) in written or any(
                _writes(ins_list[j], key) for j in t[3][1:]):
            bad.add(s)
            out.pop(s, None)
            continue
        out.setdefault(s, {})[key] = (ld,) + r
    return out


def _writes(ins, key):
    d = ins.dst
    if d is not None and (d[0], d[1]) == key:
        return True
    for j in (ins.a.get('wsrc', ()) if ins.a else ()):
        v = ins.srcs[j]
        if v is not None and (v[0], v[1]) == key:
            return True
    return False


def reload_blocks(prog, ins_list):
    """When the sites' live tiles fit SBUF but not with the streaming sites double-buffered
    (_double_buffered), a block of loaded tiles held over a loop (the largest first) is
    re-loaded at each use rather than kept (remat.py); repeated while they still exceed it."""
    cap = prog.pol.capacity()
    while True:
        tiles, sites = _live_sites(ins_list, prog.pol)
        # (allocate starts from these: the picks in between change no view)
        prog.live_sites = (ins_list, tiles, sites)
        need = _double_buffered(sites)
        if need <= cap or sum(s.live * s.size for s in sites if s.kind == 'sbuf') > cap:
            # (the live tiles themselves not fitting is the spill policy's case, allocate)
            return ins_list
        cand = _reloadable(sites, tiles, ins_list)
        if not cand:
            return ins_list
        s = max(cand, key=lambda x: (x.live * x.size, -x.order))
        ins_list, n = remat.reload_at_use(prog.trace, ins_list, cand[s])
        prog.decisions.append(('reload', s.loc, {
            'buffer': s.name or '-', 'tiles': s.tiles, 'live': s.live, 'bytes': s.size,
            'loads': n, 'reason': 'double_buffers_%d_over_sbuf_%d' % (need, cap)}))


# --- 1c. loop-invariant work done once ------------------------------------------------------

_NOT_HOISTED = frozenset(('dma', 'memset', 'iota'))


def hoist(prog, ins_list):
    """Computed tiles that repeat an earlier tile's whole content (invariant.py) are that
    tile, site by site in order of first use, while the live tiles fit SBUF and the
    streaming sites' second buffers fit as well as before; the work that fed only them
    (their loads, PSUM results) goes too."""
    if not prog.pol.hoist:
        return ins_list
    vals = invariant.Values(ins_list)
    alias = vals.aliases()
    groups = {}
    for t, e in alias.items():
        # computed tiles only: a plain load read as it is stays where the source put it
        # (the Tiled matmul tutorial, whose hand-hoisted Opt 1 is measured 17 % faster),
        # and so does a constant (memset, iota)
        if t[0].kind == 'sbuf' and any(ins_list[k].op not in _NOT_HOISTED
                                       for k in vals.writers[t]):
            b = e[0]
            groups.setdefault((b.site, b.name if not b.temp else ''), {})[t] = e
    if not groups:
        return ins_list
    cap = prog.pol.capacity()
    _, sites = _live_sites(ins_list, prog.pol)
    need0 = max(_double_buffered(sites), cap)
    accepted = set()
    out = ins_list
    dropped = 0
    for key, g in sorted(groups.items(), key=lambda x: min(vals.first[t] for t in x[1])):
        trial = accepted | set(g)
        cand, n = invariant.rewrite(ins_list, vals, alias, trial)
        _, sites = _live_sites(cand, prog.pol)
        live = sum(s.live * s.size for s in sites if s.kind == 'sbuf')
        if live > cap or _double_buffered(sites) > need0:
            continue
        accepted = trial
        out = cand
        e = next(iter(g.values()))[0]
        prog.decisions.append(('hoist', e.site, {'buffer': e.name or '-', 'tiles': len(g),
                                                 'dropped': n - dropped}))
        dropped = n
    return out


# --- 2. allocation -------------------------------------------------------------------------

class Site:
    __slots__ = ('key', 'kind', 'loc', 'tiles', 'size', 'live', 'want', 'slots', 'free',
                 'order', 'spills', 'name', 'addr0', 'asked', 'first', 'last', 'banks')

    def __init__(self, key, kind, loc, order):
        self.key = key
        self.kind = kind
        self.loc = loc
        self.tiles = 0
        self.size = 0
        self.live = 0
        self.want = 0
        self.asked = 0            # SBUF buffers before the served-loads budget took any back
        self.order = order
        self.spills = 0
        self.name = ''
        self.first = 0            # the first and last instruction touching a tile of it
        self.last = 0
        self.banks = None         # PSUM: the first bank of each buffer (psum_share)


def _tile_bytes(buf):
    return buf.F * buf.dtype.size


def _live_sites(ins_list, pol):
    """The on-chip tiles {(buf, blk): [first, last, site, uses]} and their allocation sites
    in order of first use, each with its tile count, size and tiles live at once."""
    tiles = {}
    sites = {}
    order = 0
    for k, ins in enumerate(ins_list):
        views = (ins.dst,) + ins.srcs if ins.dst is not None else ins.srcs
        for v in views:
            if v is None:
                continue
            b = v[0]
            if b.kind == 'hbm':
                continue
            key = (b, v[1])
            t = tiles.get(key)
            if t is None:
                sk = (b.kind, b.site, b.name if not b.temp else '')
                s = sites.get(sk)
                if s is None:
                    s = sites[sk] = Site(sk, b.kind, b.site, order)
                    s.name = b.name
                    order += 1
                s.tiles += 1
                sz = _tile_bytes(b)
                if b.kind == 'psum':
                    sz = -(-sz // PSUM_BANK_BYTES) * PSUM_BANK_BYTES
                    if sz > PSUM_BANKS * PSUM_BANK_BYTES:
                        raise CompileError('a PSUM tile of %d bytes per partition (PSUM holds '
                                           '%d)' % (sz, PSUM_BANKS * PSUM_BANK_BYTES),
                                           where=_where(b.site))
                else:
                    sz = -(-sz // pol.align) * pol.align
                if sz > s.size:
                    s.size = sz
                tiles[key] = [k, k, s, [k]]
                if s.tiles == 1:
                    s.first = k
                s.last = k
            else:
                t[2].last = k
                if t[1] != k:
                    t[3].append(k)
                t[1] = k
    # tiles live at once, per site
    ev = []
    for t in tiles.values():
        ev.append((t[0], 1, t[2].order))
        ev.append((t[1] + 1, -1, t[2].order))
    ev.sort()
    byorder = sorted(sites.values(), key=lambda s: s.order)
    cnt = [0] * len(byorder)
    for _, d, o in ev:
        cnt[o] += d
        if cnt[o] > byorder[o].live:
            byorder[o].live = cnt[o]
    return tiles, byorder


def allocate(prog, ins_list):
    pol = prog.pol
    known = prog.live_sites
    if known is not None and known[0] is ins_list:
        tiles, byorder = known[1], known[2]
    else:
        tiles, byorder = _live_sites(ins_list, pol)
    prog.live_sites = None
    # what each instruction loads (served.load_key), found once for the three passes that ask
    lkeys = served.load_keys(ins_list) if pol.serve_loads else None
    again = (served.loaded_again(ins_list, lkeys, lambda v: tiles[(v[0], v[1])][2])
             if pol.serve_loads else set())
    prog.pooled = _choose_buffers(prog, byorder, pol, again)
    # lay out the buffers: SBUF from 0 in site order, PSUM by banks
    sb = 0
    bank = 0
    slot_id = 0
    for s in byorder:
        s.slots = []
        if s.kind == 'psum':
            nb = s.size // PSUM_BANK_BYTES
            for j in range(s.want):
                b = s.banks[j] if s.banks is not None else bank
                s.slots.append((slot_id, b * PSUM_BANK_BYTES))
                slot_id += 1
                bank = max(bank, b + nb)
            s.addr0 = s.slots[0][1] if s.slots else 0
        else:
            s.addr0 = sb
            for j in range(s.want):
                s.slots.append((slot_id, sb))
                slot_id += 1
                sb += s.size
        s.free = deque(s.slots)
    prog.sbuf_used = sb
    prog.psum_banks = bank
    return _assign(prog, ins_list, tiles, byorder, lkeys)


def _choose_buffers(prog, sites, pol, again):
    """Buffers per site (want); True when SBUF must be one pool. again: the sites keeping
    loaded bytes that a later load asks for (served.loaded_again)."""
    cap = pol.capacity()
    sb = [s for s in sites if s.kind == 'sbuf']
    ps = [s for s in sites if s.kind == 'psum']
    for s in sb:
        n = pol.site_bufs.get(s.loc[1] if s.loc else -1, pol.bufs)
        s.want = min(s.tiles, s.live * n)
    total = sum(s.want * s.size for s in sb)
    # too much: take extra buffers back, first from the sites that cycle least often
    # (fewest generations of tiles: tiles / live), then the largest tiles; then the extra
    # buffers of sites keeping loads for a later load, until all fit pol.serve_capacity()
    total = _take_back(sb, total, cap, lambda s: True)
    for s in sb:
        s.asked = s.want
    total = _take_back(sb, total, pol.serve_capacity(), lambda s: s in again)
    pooled = total > cap
    if pooled:
        # the live tiles of every site do not fit side by side: SBUF becomes one pool in
        # which tiles of different sites share space when their lifetimes allow (and the
        # ones that still do not fit are spilled)
        for s in sb:
            s.want = 0
    # PSUM: live banks, then share the rest among sites with more tiles
    used = sum(s.live * (s.size // PSUM_BANK_BYTES) for s in ps)
    if used > PSUM_BANKS:
        worst = max(ps, key=lambda x: x.live * x.size)
        raise CompileError('PSUM: %d banks of 2 KiB are live at once (there are %d); the '
                           'largest user is the tile declared here (%d live)'
                           % (used, PSUM_BANKS, worst.live), where=_where(worst.loc))
    for s in ps:
        s.want = s.live
    if pol.psum_share and _share_banks(ps):
        return pooled
    for s in ps:
        s.want = s.live
        s.banks = None
    changed = True
    while changed:
        changed = False
        for s in ps:
            nb = s.size // PSUM_BANK_BYTES
            if s.want < s.tiles and used + nb <= PSUM_BANKS:
                s.want += 1
                used += nb
                changed = True
    return pooled


def _share_banks(ps):
    """PSUM banks by lifetime (`psum_share`): sites never live at the same time (from the
    first to the last instruction touching one of their tiles) use the same banks, so each
    site's extra buffers are handed out, one at a time to the sites with more tiles than
    buffers, from the banks the sites overlapping it leave; then each buffer takes the lowest
    banks no overlapping site placed before it holds. False when that layout does not fit
    (the caller then shares the banks out over all sites)."""
    def nbanks(s):
        return s.size // PSUM_BANK_BYTES

    def overlaps(a, b):
        return a.first <= b.last and b.first <= a.last

    near = {s: [o for o in ps if o is not s and overlaps(s, o)] for s in ps}

    def peak(s):
        # the most banks in use at once while s is live (the load peaks at a site's start)
        worst = 0
        for t in [s] + near[s]:
            x = max(t.first, s.first)
            worst = max(worst, sum(o.want * nbanks(o) for o in [s] + near[s]
                                   if o.first <= x <= o.last))
        return worst

    if any(peak(s) > PSUM_BANKS for s in ps):
        return False
    changed = True
    while changed:
        changed = False
        for s in ps:
            if s.want < s.tiles:
                s.want += 1
                if peak(s) <= PSUM_BANKS:
                    changed = True
                else:
                    s.want -= 1
    placed = []
    for s in sorted(ps, key=lambda x: x.first):
        held = set()
        for o in placed:
            if overlaps(s, o):
                for b in o.banks:
                    held.update(range(b, b + nbanks(o)))
        s.banks = []
        for _ in range(s.want):
            b = next((b for b in range(PSUM_BANKS - nbanks(s) + 1)
                      if not held.intersection(range(b, b + nbanks(s)))), None)
            if b is None:
                break
            s.banks.append(b)
            held.update(range(b, b + nbanks(s)))
        if len(s.banks) < s.live:
            return False
        s.want = len(s.banks)
        placed.append(s)
    return True


def _take_back(sb, total, room, which):
    """Takes extra buffers (beyond the live tiles) back from the sites `which` accepts until
    the SBUF sites' buffers (`total` bytes) fit `room`; returns the new total."""
    while total > room:
        cand = [s for s in sb if s.want > s.live and which(s)]
        if not cand:
            break
        s = min(cand, key=lambda x: (x.tiles / x.live, -x.size, x.order))
        s.want -= 1
        total -= s.size
    return total


class _SpillState:
    """Pooled SBUF: the tiles resident in the pool, where spilled ones live in HBM."""
    __slots__ = ('pool', 'where', 'tiles', 'resident', 'dirty', 'spilled', 'row', 'buf',
                 'writer')

    def __init__(self, pool, where, tiles):
        self.pool = pool
        self.where = where            # (buf, blk) -> (slot_id, addr)
        self.tiles = tiles
        self.resident = {}            # (buf, blk) -> size in the pool
        self.dirty = set()            # tiles written since they were last saved to HBM
        self.spilled = {}             # (buf, blk) -> offset in the spill buffer's row
        self.row = 0                  # bytes of the spill buffer's row
        self.buf = None               # the HBM spill buffer, once something spilled
        self.writer = {}              # (buf, blk) -> engine that last wrote it (None: a DMA)


def _evict(prog, sp, ins, k, victim, out):
    """Frees a resident tile's pool space before instruction k, saving it to the spill
    buffer first when it was written since its last save (else HBM already has it)."""
    vslot = sp.where.pop(victim)
    vsize = sp.resident.pop(victim)
    if sp.buf is None:
        sp.buf = Buf((128, 1), _u8(), 'hbm', ('<spill>', 0), 'spill')
        sp.buf.role = 'spill'
        prog.spill = sp.buf
    off = sp.spilled.get(victim)
    if off is None:
        off = sp.spilled[victim] = sp.row
        sp.row += _tile_bytes(victim[0])
    if victim in sp.dirty:
        out.append(_spill_dma(prog, ins, victim, vslot, sp.buf, off, True,
                              sp.writer.get(victim)))
        sp.dirty.discard(victim)
        sp.tiles[victim][2].spills += 1
    sp.pool.release(vslot[1], vsize, k)


def _assign(prog, ins_list, tiles, sites, lkeys):
    """Slots in program order; spills where a site has fewer buffers than live tiles.
    lkeys: each instruction's load key (served.load_keys), None without served loads."""
    out = []
    where = {}                    # (buf, blk) -> (slot_id, addr)
    addrs = {}                    # an instruction's addresses: one tuple of each kept
    last_of = {}
    for key, t in tiles.items():
        last_of.setdefault(t[1], []).append(key)
    pool = _Pool(prog.pol.capacity(), prog.pol.align) if prog.pooled else None
    sp = _SpillState(pool, where, tiles)
    resident = sp.resident
    dirty = sp.dirty
    spilled = sp.spilled
    held = served.Held() if pool is None and prog.pol.serve_loads else None
    # furthest next use: at every site, or (auto) at the sites the served-loads budget took
    # buffers from
    how = prog.pol.serve_reuse
    pick = set(s for s in sites if how == 'furthest' or (how == 'auto' and s.want < s.asked))
    reuse = served.Reuse(lkeys) if held is not None and pick else None
    home = {}                     # served tile -> the site whose buffer it took
    owner = {a[0]: s for s in sites for a in s.slots} if held is not None else {}
    nserved = {}                  # site -> [loads served, bytes]
    for k, ins in enumerate(ins_list):
        views = (ins.dst,) + ins.srcs
        if held is not None and ins.op == 'dma' and ins.dst[0].kind == 'sbuf':
            lk = lkeys[k]
            dkey = (ins.dst[0], ins.dst[1])
            slot = held.find(lk) if dkey not in where else None
            hs = owner.get(slot)
            if hs is not None and any(f[0] == slot for f in hs.free):
                # the bytes are still in a free buffer: the tile takes it, no load
                a = next(f for f in hs.free if f[0] == slot)
                hs.free.remove(a)
                where[dkey] = a
                home[dkey] = hs
                n = nserved.setdefault(tiles[dkey][2], [0, 0])
                n[0] += 1
                n[1] += _tile_bytes(ins.dst[0]) * ins.dst[0].P
                ins.addr = [a, None]
                for key in last_of.get(k, ()):
                    _release(where, home, tiles, key)
                continue
        addr = []
        for v in views:
            if v is None or v[0].kind == 'hbm':
                addr.append(None)
                continue
            key = (v[0], v[1])
            a = where.get(key)
            if a is None and pool is not None and v[0].kind == 'sbuf':
                t = tiles[key]
                size = t[2].size
                a0 = pool.alloc(size)
                while a0 is None:
                    _evict(prog, sp, ins, k, _victim(resident, k, tiles, views), out)
                    a0 = pool.alloc(size)
                a = (None, a0)
                where[key] = a
                resident[key] = size
                # spill ahead: keep room for `spill_ahead - 1` more tiles of this size, so
                # that the next ones take space freed (and saved) a few tiles ago; only by
                # evicting tiles of the same site that are the ones used furthest ahead
                ahead = prog.pol.ahead() - 1
                while ahead > 0 and pool.room(size) < ahead:
                    victim = _victim(resident, k, tiles, views, strict=False)
                    if victim is None or tiles[victim][2] is not t[2]:
                        break
                    _evict(prog, sp, ins, k, victim, out)
                if key in spilled:
                    out.append(_spill_dma(prog, ins, key, a, sp.buf, spilled[key], False))
            elif a is None:
                t = tiles[key]
                s = t[2]
                if not s.free:
                    # a site has at least as many buffers as tiles live at once
                    raise CompileError('internal: no free buffer at site %s' % (_where(s.loc),),
                                       where=_where(ins.loc))
                a = reuse.take(s.free, held, k) if reuse and s in pick else s.free.popleft()
                where[key] = a
                if held is not None:
                    held.forget(a[0])
            addr.append(a)
        addr = tuple(addr)
        ins.addr = addrs.setdefault(addr, addr)
        out.append(ins)
        d = ins.dst
        if d is not None and d[0].kind == 'sbuf':
            dirty.add((d[0], d[1]))
            if pool is not None:
                sp.writer[(d[0], d[1])] = None if ins.op == 'dma' else ins.eng
        if held is not None:
            _note_writes(held, ins, where, lkeys[k])
        for j in (ins.a.get('wsrc', ()) if ins.a else ()):
            v = ins.srcs[j]
            if v is not None and v[0].kind == 'sbuf':
                dirty.add((v[0], v[1]))
                if pool is not None:
                    sp.writer[(v[0], v[1])] = ins.eng
        for key in last_of.get(k, ()):
            a = where.get(key)
            if a is not None and a[0] is None:
                del where[key]
                pool.release(a[1], resident.pop(key), k)
                continue
            _release(where, home, tiles, key)
    if sp.buf is not None:
        sp.buf.shape = (128, max(sp.row, 1))
        sp.buf.F = 128 * max(sp.row, 1)
    for s in sites:
        d = {'buffer': s.name or '-', 'mem': s.kind, 'tiles': s.tiles, 'live': s.live,
             'bufs': s.want if s.want else 'pool', 'bytes': s.size}
        if s.want:
            d['addr'] = s.addr0
        if s.spills and s.kind == 'sbuf':
            d['spilled'] = s.spills
        prog.decisions.append(('alloc', s.loc, d))
    for s, (n, nb) in nserved.items():
        prog.decisions.append(('served', s.loc, {'buffer': s.name or '-', 'loads': n,
                                                 'bytes': nb}))
    if pool is not None:
        prog.decisions.append(('pool', None, {'mem': 'sbuf', 'reason': 'sites_do_not_fit',
                                              'peak_bytes': pool.peak}))
    if prog.spill is not None:
        prog.decisions.append(('spill', None, {'save_bytes': prog.spill_save,
                                               'reload_bytes': prog.spill_reload}))
    return out


def _release(where, home, tiles, key):
    """A dead tile's buffer goes back to its site's free list (a served tile's to the site
    whose buffer it took)."""
    a = where.pop(key, None)
    if a is not None:
        s = home.pop(key, None) or tiles[key][2]
        s.free.append(a)


def _note_writes(held, ins, where, lkey):
    """What instruction `ins` overwrites stops being a load's bytes: its SBUF destination
    (and operands it writes), or an HBM tensor's bytes that buffers held. lkey: what ins
    loads (served.load_key)."""
    d = ins.dst
    if d is not None:
        if d[0].kind == 'hbm':
            held.hbm_written(d[0])
        elif d[0].kind == 'sbuf':
            a = where.get((d[0], d[1]))
            held.fill(a[0], lkey)
    for j in (ins.a.get('wsrc', ()) if ins.a else ()):
        v = ins.srcs[j]
        if v is not None and v[0].kind == 'sbuf':
            held.forget(where[(v[0], v[1])][0])


class _Pool:
    """SBUF as one pool: first fit among free extents, preferring the one freed longest ago
    (the longest distance between a tile's last use and the next write of its bytes)."""

    def __init__(self, cap, align):
        self.free = [[0, cap, -1]]      # [addr, end, freed at], sorted by addr
        self.align = align
        self.used = 0
        self.peak = 0

    def alloc(self, size):
        best = -1
        for i, (a, e, st) in enumerate(self.free):
            if e - a >= size and (best < 0 or st < self.free[best][2]):
                best = i
        if best < 0:
            return None
        a, e, st = self.free[best]
        if e - a == size:
            del self.free[best]
        else:
            self.free[best][0] = a + size
        self.used += size
        if self.used > self.peak:
            self.peak = self.used
        return a

    def room(self, size):
        """How many tiles of `size` bytes the free extents hold."""
        return sum((e - a) // size for a, e, _ in self.free)

    def release(self, addr, size, stamp):
        self.used -= size
        fr = self.free
        i = bisect.bisect_left(fr, [addr])
        fr.insert(i, [addr, addr + size, stamp])
        if i + 1 < len(fr) and fr[i][1] == fr[i + 1][0]:
            fr[i][1] = fr[i + 1][1]
            fr[i][2] = max(fr[i][2], fr[i + 1][2])
            del fr[i + 1]
        if i > 0 and fr[i - 1][1] == fr[i][0]:
            fr[i - 1][1] = fr[i][1]
            fr[i - 1][2] = max(fr[i - 1][2], fr[i][2])
            del fr[i]


def _victim(resident, k, tiles, views, strict=True):
    """Belady: the tile of `resident` used furthest ahead (not by instruction k); None when
    there is none and not strict."""
    using = set((v[0], v[1]) for v in views if v is not None)
    best, bnext = None, -1
    for key in resident:
        if key in using:
            continue
        uses = tiles[key][3]
        j = bisect.bisect_right(uses, k)
        nxt = uses[j] if j < len(uses) else 1 << 60
        if nxt > bnext:
            best, bnext = key, nxt
    if best is None and strict:
        raise CompileError('SBUF: the tiles of one instruction do not fit', where=None)
    return best


def _u8():
    from . import dtypes
    return dtypes.uint8


def _spill_dma(prog, ins, key, slot, spill_buf, off, save, writer=None):
    from .record import Ins
    b, blk = key
    nbytes = _tile_bytes(b)
    chip = (b, blk, 0, b.tile_axes())
    hbm = (spill_buf, 0, off, ((0, b.P), (1, nbytes)))    # bytes of the spill row
    # spills have their own queues: reloads triggered by Sync; saves by Sync, or (policy
    # spill_trigger=writer) like stores by the engine that last wrote the tile
    trig = SP
    if save and prog.pol.spill_trigger == 'writer' and writer is not None and writer != PE:
        trig = writer
    # (spill_queues=N: N queues per direction and trigger engine, taken in turn)
    n = prog.spill_q.get((save, trig, 'n'), 0)
    prog.spill_q[(save, trig, 'n')] = n + 1
    qk = (save, trig, n % prog.pol.spill_queues)
    q = prog.spill_q.get(qk)
    if q is None:
        q = Queue('q%sSpill%s%s' % ('' if trig == SP else ENGINE_NAMES[trig],
                                    'Save' if save else 'Load', qk[2] or ''),
                  'out' if save else 'in', trig, 5 + len(prog.queues), ('spill',) + qk)
        prog.queues.append(q)
        prog.spill_q[qk] = q
    a = {'kind': 'spill_save' if save else 'spill_reload', 'api': 'spill',
         'spill_off': off, 'spill_bytes': nbytes, 'q': q}
    if save:
        i = Ins('dma', trig, ins.loc, ins.nest, hbm, (chip,), a, ins.epoch)
        i.addr = [None, slot]
        prog.spill_save += nbytes * b.P
    else:
        i = Ins('dma', SP, ins.loc, ins.nest, chip, (hbm,), a, ins.epoch)
        i.addr = [slot, None]
        prog.spill_reload += nbytes * b.P
    return i


# --- 3. dependencies and semaphores ----------------------------------------------------------

_CHUNK = 2048
_RANGES = 16      # disjoint byte ranges kept per region and stream (then merged)


def _region(v, a):
    """(key, lo, hi, p0, p1) of a view: bytes inside its SBUF/PSUM buffer or HBM tensor;
    in pooled SBUF a list of such regions, one per 2 KiB chunk the view touches."""
    b = v[0]
    ds = b.dtype.size
    if a is not None:
        F = b.F
        row, col = divmod(v[2], F)
        ext = 1
        axes = v[3]
        for s, n in axes[1:]:
            ext += s * (n - 1)
        n0 = axes[0][1] if axes else 1
        base = a[1]
        lo, hi = base + col * ds, base + (col + ext) * ds
        if a[0] is None:
            return [(('c', c), max(lo, c * _CHUNK), min(hi, (c + 1) * _CHUNK), row, row + n0)
                    for c in range(lo // _CHUNK, (hi - 1) // _CHUNK + 1)]
        return (a[0], lo, hi, row, row + n0)
    ext = 1
    for s, n in v[3]:
        ext += s * (n - 1)
    return (('h', id(b)), v[2] * ds, (v[2] + ext) * ds, 0, 1)


def _deps(ins_list, full=False):
    """Dependencies in list order: per instruction the latest conflicting instruction of
    each other stream (split for a matmul: the stationary's, then the rest); with full,
    instead of those (the list is empty), every (region, stream) producer and the regions
    touched (for the scheduler)."""
    regs = {}
    sets = {}
    deps_of = []
    alld = [] if full else None
    touched = [] if full else None
    for k, ins in enumerate(ins_list):
        if ins.op == 'dma':
            stream = ins.a['q'].stream
        else:
            stream = ins.eng
        eng = ins.eng
        need = {}
        acc = []
        dst = ins.dst
        wsrc = ins.a.get('wsrc', ()) if ins.a else ()
        views = (dst,) + ins.srcs
        for j, v in enumerate(views):
            if v is None:
                continue
            r = _region(v, ins.addr[j])
            w = j == 0 or (j - 1) in wsrc
            if r.__class__ is list:
                for x in r:
                    acc.append((x, w, j))
            else:
                acc.append((r, w, j))
        stat_j = -1
        if ins.op == 'mm':
            # the stationary's producers are waited for by the LDWEIGHTS, the rest by the
            # MATMUL (the pair is one instruction in NKI, two on the engine)
            stat_j = 2 if ins.a.get('ident') else 1
            if ins.srcs[stat_j - 1] is None:
                stat_j = -1
        need_stat = None
        mine = [] if full else None
        if stat_j >= 0:
            acc.sort(key=lambda x: x[2] != stat_j)
        first_other = stat_j >= 0      # True while the stationary's regions are handled
        for (key, lo, hi, p0, p1), w, vj in acc:
            if first_other and vj != stat_j:
                first_other = False
                need_stat, need = need, {}
            st = regs.get(key)
            if st is None:
                st = regs[key] = ({}, {})
            # a read conflicts with earlier writes, a write with earlier reads and writes
            for D in (st if w else st[:1]):
                for S, es in D.items():
                    if S == stream or S == eng:
                        continue
                    for e in es:
                        if e[0] < hi and lo < e[1] and e[2] < p1 and p0 < e[3]:
                            if need.get(S, -1) < e[4]:
                                need[S] = e[4]
                            if full:
                                mine.append((e[4], S, first_other))
        if first_other:
            need_stat, need = need, {}
        for (key, lo, hi, p0, p1), w, vj in acc:
            W, R = regs[key]
            if w:
                # what this write covers, earlier accesses of other streams included, no
                # later access needs to wait for
                for D in (W, R):
                    for S in list(D):
                        es = [e for e in D[S] if not (lo <= e[0] and e[1] <= hi and
                                                      p0 <= e[2] and e[3] <= p1)]
                        if es:
                            D[S] = es
                        else:
                            del D[S]
                D = W
            else:
                D = R
            # per stream, its accesses' byte ranges, those that overlap merged (a later
            # instruction of a stream waits for all its earlier ones, so a merged range
            # keeps the latest); disjoint ones stay apart, so a write next to bytes a
            # stream keeps reading (in one 2 KiB chunk of pooled SBUF) does not wait for it
            es = D.get(stream)
            if es is None:
                D[stream] = [[lo, hi, p0, p1, k]]
                continue
            for e in es:
                if e[0] < hi and lo < e[1]:
                    if lo < e[0]:
                        e[0] = lo
                    if hi > e[1]:
                        e[1] = hi
                    if p0 < e[2]:
                        e[2] = p0
                    if p1 > e[3]:
                        e[3] = p1
                    e[4] = k
                    break
            else:
                if len(es) < _RANGES:
                    es.append([lo, hi, p0, p1, k])
                else:               # many narrow accesses: one range over all of them
                    e = es[0]
                    for x in es[1:]:
                        e[0], e[1] = min(e[0], x[0]), max(e[1], x[1])
                        e[2], e[3] = min(e[2], x[2]), max(e[3], x[3])
                    e[0], e[1] = min(e[0], lo), max(e[1], hi)
                    e[2], e[3], e[4] = min(e[2], p0), max(e[3], p1), k
                    del es[1:]
        if full:
            # (the scheduler needs no deps_of; the sets of regions repeat, one kept of each)
            alld.append(tuple(mine))
            t = frozenset([r[0][0] for r in acc])
            touched.append(sets.setdefault(t, t))
        else:
            deps_of.append((need_stat, need) if need_stat else need)
    return deps_of, alld, touched


def schedule(prog, ins_list):
    """The reordering policy: each engine's instructions are reordered by when their
    inputs are estimated to be ready (a program-order estimate of every instruction's
    finish), an instruction moving ahead of at most `window - 1` earlier ones of its engine,
    only past instructions that touch none of its buffers and never past one of an earlier
    iteration of an nl.sequential_range loop (the compiler pipelines affine_range loops,
    not sequential ones). Returns the new global order (by estimated start), which keeps
    every dependency."""
    pol = prog.pol
    W = pol.window
    n = len(ins_list)
    _, alld_f, touched = _deps(ins_list, True)
    alld = [tuple([x[0] for x in m]) for m in alld_f]
    clk = _CLK[pol.target]
    cost = [0.0] * n
    dma_done = [0.0] * n
    for k, ins in enumerate(ins_list):
        if ins.op == 'dma':
            q = ins.a['q']
            cost[k] = 600.0 if q.type == 'dynamic_hw' else 64 / clk[ins.eng]
            v = ins.srcs[0]
            nb = _free(v) * (v[3][0][1] if v[3] else 1) * v[0].dtype.size
            dma_done[k] = 1300.0 + nb / 373.0
        else:
            cost[k] = _cost(ins, clk)
    # program-order estimate of when each instruction's inputs are ready
    ready = [0.0] * n
    fin = [0.0] * n
    efree = [0.0] * 5
    for k, ins in enumerate(ins_list):
        r = 0.0
        for d in alld[k]:
            if fin[d] > r:
                r = fin[d]
        ready[k] = r
        e = ins.eng
        st = efree[e] if efree[e] > r else r
        efree[e] = st + cost[k]
        fin[k] = efree[e] + dma_done[k]
    # per engine: move instructions whose inputs come earlier ahead, within the window
    streams = [[] for _ in range(5)]
    for k, ins in enumerate(ins_list):
        streams[ins.eng].append(k)
    moved = 0
    orders = []
    for e in range(5):
        stream = streams[e]
        out = []
        win = stream[:W]
        nxt = len(win)
        rd = ready.__getitem__
        while win:
            best = 0
            # (an instruction ahead of the head only moves when its inputs are ready sooner:
            # when none is, no byte-range check is needed)
            if len(win) > 1 and min(map(rd, win)) < ready[win[0]]:
                seen = set(touched[win[0]])
                br = ready[win[0]]
                ep = ins_list[win[0]].epoch
                for j in range(1, len(win)):
                    c = win[j]
                    tc = touched[c]
                    if ins_list[c].epoch != ep:
                        break               # a later iteration of a sequential_range loop
                    if seen.isdisjoint(tc):
                        if ready[c] < br:
                            best, br = j, ready[c]
                    seen |= tc
            if best:
                moved += 1
            out.append(win.pop(best))
            if nxt < len(stream):
                win.append(stream[nxt])
                nxt += 1
        orders.append(out)
    # merge the engines' orders into one list by estimated start
    placed = [False] * n
    efree = [0.0] * 5
    head = [0] * 5
    fin = [0.0] * n
    order = []
    # per engine, of its head instruction: how many of its producers are placed (in list
    # order) and the latest finish among them; once all are, when its inputs are ready
    # (a placed producer's finish never changes, so each producer is looked at once)
    scan = [0] * 5
    hmax = [0.0] * 5
    hready = [None] * 5
    for _ in range(n):
        be, bs = -1, 0.0
        for e in range(5):
            r = hready[e]
            if r is None:
                h = head[e]
                if h >= len(orders[e]):
                    continue
                ds = alld[orders[e][h]]
                i, m = scan[e], hmax[e]
                while i < len(ds):
                    d = ds[i]
                    if not placed[d]:
                        break
                    if fin[d] > m:
                        m = fin[d]
                    i += 1
                scan[e], hmax[e] = i, m
                if i < len(ds):
                    continue
                hready[e] = r = m
            st = efree[e] if efree[e] > r else r
            if be < 0 or st < bs:
                be, bs = e, st
        if be < 0:
            # cannot happen with consistent estimates; keep program order
            return ins_list, None
        k = orders[be][head[be]]
        head[be] += 1
        scan[be], hmax[be], hready[be] = 0, 0.0, None
        placed[k] = True
        efree[be] = bs + cost[k]
        fin[k] = efree[be] + dma_done[k]
        order.append(k)
    prog.decisions.append(('reorder', None, {'policy': 'ready-time', 'window': W,
                                             'moved': moved}))
    del alld, touched, orders, ready, rd, fin, cost, dma_done
    # the dependencies in the new order: per stream the producer placed last (the
    # producers of one stream on one region keep their order, so this is the latest)
    pos = [0] * n
    for p, k in enumerate(order):
        pos[k] = p
    deps_of = []
    for k in order:
        need = {}
        stat = {}
        anystat = False
        deps_k = alld_f[k]
        alld_f[k] = None            # (freed as they are used)
        for d, S, st in deps_k:
            D = stat if st else need
            if st:
                anystat = True
            p = pos[d]
            if D.get(S, -1) < p:
                D[S] = p
        ins = ins_list[k]
        if ins.op == 'mm' and (anystat or stat):
            deps_of.append((stat, need))
        else:
            deps_of.append(need)
    return [ins_list[k] for k in order], deps_of


def sync(prog, ins_list, deps_of=None):
    """Fills each instruction's waits [(stream, count)] and whether it signals."""
    nstreams = 5 + len(prog.queues)
    if deps_of is None:
        deps_of, _, _ = _deps(ins_list)
    for ins in ins_list:
        ins.sig = False
    for need in deps_of:
        if need.__class__ is tuple:
            for S, idx in need[0].items():
                ins_list[idx].sig = True
            need = need[1]
        for S, idx in need.items():
            ins_list[idx].sig = True
    # semaphore counts with what each engine already knows (vector clocks)
    zero = (0,) * nstreams
    known = [zero] * 5
    count = [0] * nstreams
    snap = [dict() for _ in range(nstreams)]
    num = [0] * len(ins_list)
    for k, ins in enumerate(ins_list):
        eng = ins.eng
        kn = known[eng]
        deps = deps_of[k]
        deps_of[k] = None           # (freed as they are used)
        if deps.__class__ is tuple:
            kn, ins.swaits = _waits(deps[0], kn, num, snap)
            kn, waits = _waits(deps[1], kn, num, snap)
        else:
            kn, waits = _waits(deps, kn, num, snap)
        known[eng] = kn
        ins.waits = waits
        if ins.op == 'dma':
            S = ins.a['q'].stream
            count[S] += 1
            num[k] = count[S]
            snap[S][count[S]] = kn
        elif ins.sig:
            count[eng] += 1
            num[k] = count[eng]
            snap[eng][count[eng]] = kn
    prog.sig_counts = count
    return ins_list


def _waits(deps, kn, num, snap):
    """The waits deps still need given what the engine knows (kn); the new knowledge."""
    waits = []
    for S, idx in sorted(deps.items()):
        c = num[idx]
        if kn[S] >= c:
            continue
        waits.append((S, c))
        other = snap[S].get(c)
        if other is not None and other is not kn:
            kn = tuple(map(max, kn, other))
        if kn[S] < c:
            kn = kn[:S] + (c,) + kn[S + 1:]
    return kn, tuple(waits)


def compile_trace(trace, pol):
    prog = Program(trace, pol)
    ins = [i for i in trace.ins if i.op != 'dead']
    if pol.fuse:
        ins = fuse.unary(prog, ins)
    if pol.loop_order == 'reuse':
        ins = interchange.reorder(prog, ins)
    ins = hoist(prog, ins)
    ins = reload_blocks(prog, ins)
    pick(prog, ins)
    ins = allocate(prog, ins)
    deps = None
    if prog.pol.window > 1:
        ins, deps = schedule(prog, ins)
    else:
        prog.decisions.append(('reorder', None, {'policy': 'program-order'}))
    prog.ins = sync(prog, ins, deps)
    return prog
