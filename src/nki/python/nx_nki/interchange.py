"""interchange.py: the order of a perfect nest of affine_range loops (`loop_order=`).

The iterations of an `affine_range` loop are independent, so the compiler may run a nest of
them in any order. The recorder has them in source order. This pass looks at each band: a run
of instructions whose innermost loops (two or more, all affine_range, nothing recorded between
them) have the same body in every iteration. When the SBUF tiles the band touches do not fit
the target's SBUF together, it estimates each order of the band's loops by the bytes an optimal
cache of that SBUF would load again (Belady: the tile used furthest ahead leaves first, as the
allocator's spills do; a tile the band writes and reads only after it leaves at no cost) and
keeps the order that loads the fewest; ties keep the source order (the first order of fewest
bytes in the loops' lexicographic permutation order). No constant is involved.

The band is left alone when an iteration reads an on-chip tile another iteration wrote and it
did not (only accumulations, loop_reduce and matmul `+=`, are carried over: any order of the
loops keeps their first iteration first), when it both reads and writes one HBM tensor, or
when it has more than MAX_LOOPS loops (the orders grow as the factorial).
"""
import heapq
import itertools

from .policy import PSUM_BANK_BYTES

MAX_LOOPS = 6


def _chunks(ins_list, kinds):
    """(start, end, depth) of every band: ins_list[start:end] are whole iterations of the
    loops at depths depth.. of their nest, all affine_range, with the outer values fixed."""
    out = []
    n = len(ins_list)
    k = 0
    while k < n:
        nest = ins_list[k].nest
        lines = tuple((x[2], x[3]) for x in nest)
        e = k + 1
        while e < n and len(ins_list[e].nest) == len(nest) and \
                tuple((x[2], x[3]) for x in ins_list[e].nest) == lines:
            e += 1
        d = len(nest)
        b = d
        while b > 0 and kinds.get(lines[b - 1]) == 'affine_range':
            b -= 1
        # split the run where a value outside the band changes
        s = k
        for j in range(k + 1, e + 1):
            if j == e or ins_list[j].nest[:b] != ins_list[s].nest[:b]:
                if d - b >= 2:
                    out.append((s, j, b))
                s = j
        k = e
    return out


def _iterations(ins_list, start, end, depth):
    """[(values, [ins, ...]), ...] in recorded order, or None when the iterations are not
    the whole product of their loops' values in source order with one body."""
    its = []
    for k in range(start, end):
        ins = ins_list[k]
        vals = tuple(x[1] for x in ins.nest[depth:])
        if its and its[-1][0] == vals:
            its[-1][1].append(ins)
        else:
            its.append((vals, [ins]))
    body = [i.loc for i in its[0][1]]
    if any([i.loc for i in it[1]] != body for it in its):
        return None
    axes = [sorted(set(v[j] for v, _ in its)) for j in range(len(its[0][0]))]
    count = 1
    for a in axes:
        count *= len(a)
    if count != len(its) or [v for v, _ in its] != list(itertools.product(*axes)):
        return None
    if len(set(i.epoch for _, b in its for i in b)) != 1:
        return None
    return its


def _independent(its):
    """Whether only accumulations carry values from one iteration to another."""
    writers = {}
    hbm_w, hbm_r = set(), set()
    for n, (_, body) in enumerate(its):
        for ins in body:
            if ins.dst is not None:
                b = ins.dst[0]
                if b.kind == 'hbm':
                    hbm_w.add(b)
                else:
                    writers.setdefault((b, ins.dst[1]), set()).add(n)
    for n, (_, body) in enumerate(its):
        for ins in body:
            for v in ins.srcs:
                if v is None:
                    continue
                if v[0].kind == 'hbm':
                    hbm_r.add(v[0])
                    continue
                w = writers.get((v[0], v[1]))
                if w is not None and n not in w:
                    return False
    return not (hbm_w & hbm_r)


def _size(buf, align):
    sz = buf.F * buf.dtype.size
    if buf.kind == 'psum':
        return -(-sz // PSUM_BANK_BYTES) * PSUM_BANK_BYTES
    return -(-sz // align) * align


def _reloads(seq, sizes, room):
    """Bytes an optimal cache of room bytes loads beyond the first load of each tile."""
    nxt = [0] * len(seq)
    seen = {}
    for j in range(len(seq) - 1, -1, -1):
        nxt[j] = seen.get(seq[j], len(seq))
        seen[seq[j]] = j
    held = {}                     # tile -> its next use
    heap = []
    used = 0
    loaded = set()
    cost = 0
    for j, t in enumerate(seq):
        if t in held:
            held[t] = nxt[j]
            heapq.heappush(heap, (-nxt[j], t))
            continue
        if t in loaded:
            cost += sizes[t]
        loaded.add(t)
        while used + sizes[t] > room and heap:
            nu, v = heapq.heappop(heap)
            if held.get(v) != -nu:
                continue
            del held[v]
            used -= sizes[v]
        held[t] = nxt[j]
        used += sizes[t]
        heapq.heappush(heap, (-nxt[j], t))
    return cost


def _best(its, sizes, room):
    """The order of the band's loops (a permutation of its depths; those of one value stay
    first) whose SBUF tiles an optimal cache of room bytes loads again the least, that figure
    and the source order's."""
    ids = {}
    touches = []
    for _, body in its:
        r = []
        for ins in body:
            for v in ((ins.dst,) if ins.dst is not None else ()) + ins.srcs:
                if v is not None and v[0].kind == 'sbuf':
                    i = ids.setdefault((v[0], v[1]), len(ids))
                    if i not in r:
                        r.append(i)
        touches.append(r)
    size_of = [0] * len(ids)
    for t, i in ids.items():
        size_of[i] = sizes(t[0])
    depth = len(its[0][0])
    fixed = [j for j in range(depth) if all(v[j] == its[0][0][j] for v, _ in its)]
    free = [j for j in range(depth) if j not in fixed]
    best = None
    source = None
    for p in itertools.permutations(free):
        perm = tuple(fixed) + p
        order = sorted(range(len(its)), key=lambda n: tuple(its[n][0][j] for j in perm))
        seq = []
        for n in order:
            for t in touches[n]:
                if not seq or seq[-1] != t:
                    seq.append(t)
        c = _reloads(seq, size_of, room)
        if source is None:
            source = c
        if best is None or c < best[1]:
            best = (perm, c)
    return best[0], best[1], source


def reorder(prog, ins_list):
    """ins_list with each band's loops in the order that reloads the fewest input bytes."""
    pol = prog.pol
    kinds = prog.trace.loop_kinds
    out = []
    done = 0
    seen = {}
    for start, end, depth in _chunks(ins_list, kinds):
        if end - start < 2:
            continue
        its = _iterations(ins_list, start, end, depth)
        if its is None or len(its) < 2 or not _independent(its):
            continue
        if sum(len(set(v[j] for v, _ in its)) > 1 for j in range(len(its[0][0]))) > MAX_LOOPS:
            continue
        room = pol.capacity()
        used = set()
        for _, body in its:
            for ins in body:
                for v in ((ins.dst,) if ins.dst is not None else ()) + ins.srcs:
                    if v is not None and v[0].kind == 'sbuf':
                        used.add((v[0], v[1]))
        if sum(_size(t[0], pol.align) for t in used) <= room:
            continue
        perm, cost, source = _best(its, lambda b: _size(b, pol.align), room)
        if cost >= source:
            continue
        nest = ins_list[start].nest
        order = sorted(range(len(its)), key=lambda n: tuple(its[n][0][p] for p in perm))
        out.extend(ins_list[done:start])
        for n in order:
            out.extend(its[n][1])
        done = end
        loops = [nest[depth + p] for p in perm]
        d = seen.get(nest[depth][2:])
        if d is None:
            d = seen[nest[depth][2:]] = {
                'order': ','.join('%s@%d' % (x[0], x[2]) for x in loops), 'bands': 0,
                'room': room, 'reload_bytes': 0, 'source_order_bytes': 0}
            prog.decisions.append(('loop_order', (nest[depth][3], nest[depth][2]), d))
        d['bands'] += 1
        d['reload_bytes'] += cost
        d['source_order_bytes'] += source
    if not done:
        return ins_list
    out.extend(ins_list[done:])
    return out
