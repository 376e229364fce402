"""remat.py: re-loading a block of loaded tiles at each use instead of keeping it in SBUF.

When a kernel loads a block of tiles from HBM and reads it over an inner loop, and that
block does not fit beside the loop's double-buffered tiles, the Neuron compiler does not
keep the block resident: it loads, before each instruction that reads a tile of the block,
just the bytes that instruction reads, from the HBM tensor they came from (docs/nki.md,
"Compiler decisions", re-loads). Later readers of other columns of the same tile that can
move up next to the first are brought there and share one load (a loop interchange: whole
rows rather than halves). This module makes that rewrite on a recorded trace; the compiler
(compiler.py) decides which blocks.
"""
from .record import Ins
from .tensor import Buf


def merged_free(axes):
    """The free axes of a view as one (stride, count) axis, or None when they do not merge
    (row-major: an outer axis's stride is the inner axis's stride times its count)."""
    st, n = 1, 1
    first = True
    for s, c in reversed(axes[1:]):
        if c == 1:
            continue
        if first:
            st, n, first = s, c, False
        elif s == st * n:
            n *= c
        else:
            return None
    return st, n


def loaded_whole(ins):
    """(hbm view, hbm free stride) when ins is a plain load that fills one whole tile from a
    view whose free axes merge into one; None otherwise."""
    a = ins.a
    if ins.op != 'dma' or a.get('kind') != 'load' or a.get('tr') or a.get('clips'):
        return None
    d = ins.dst
    src = ins.srcs[0]
    b = d[0]
    if b.kind != 'sbuf' or src[0].kind != 'hbm' or d[2] != 0:
        return None
    if d[3][0][1] != b.P or (b.F > 1 and merged_free(d[3]) != (1, b.F)):
        return None
    m = merged_free(src[3])
    if m is None or m[1] != b.F or src[3][0][1] != b.P:
        return None
    return src, m[0]


def _slice_load(trace, use, view, src, ss, loc, api):
    """A new one-tile buffer holding exactly what `view` (of a loaded tile) reads, and the
    load that fills it from `src` (the HBM view the tile was loaded from)."""
    b = view[0]
    row0, col0 = divmod(view[2], b.F)
    axes = view[3]
    pu = axes[0][1]
    free = tuple(c for _, c in axes[1:]) or (1,)
    F = 1
    for c in free:
        F *= c
    nb = Buf.tile(pu, free, F, b.dtype, 'sbuf', loc)
    nb.temp = True
    nb.id = len(trace.bufs)
    trace.bufs.append(nb)
    sp = src[3][0][0]
    hv = (src[0], src[1], src[2] + row0 * sp + col0 * ss,
          ((sp, pu),) + (tuple((s * ss, c) for s, c in axes[1:]) or ((ss, 1),)))
    dv = (nb, 0, 0, nb.taxes)
    ld = Ins('dma', None, loc, use.nest, dv, (hv,), {'kind': 'load', 'tr': False,
                                                     'api': api, 'reload': True}, use.epoch)
    return ld, dv


def _row_slice(v):
    """(first partition, partitions, first column, columns) of a view that reads one
    contiguous run of columns of each partition of its tile; None otherwise."""
    axes = v[3]
    if len(axes) != 2 or axes[1][0] != 1:
        return None
    row0, col0 = divmod(v[2], v[0].F)
    return row0, axes[0][1], col0, axes[1][1]


def _footprint(ins):
    """(tiles and HBM tensors read, written) by ins."""
    r, w = set(), set()
    wsrc = ins.a.get('wsrc', ()) if ins.a else ()
    for j, v in enumerate((ins.dst,) + ins.srcs):
        if v is None or v.__class__ is not tuple:
            continue
        b = v[0]
        key = id(b) if b.kind == 'hbm' else (id(b), v[1])
        (w if j == 0 or (j - 1) in wsrc else r).add(key)
    return r, w


def _gather(ins_list, k, blocks, moved, window):
    """The later instructions that read, one contiguous column run each, the same block
    tile (and the same partitions) as ins_list[k] does, and that can move up to just after
    it: nothing they touch is written, and nothing they write is touched, by an instruction
    they would pass; never across a sequential_range iteration. Marks them in `moved`."""
    ins = ins_list[k]
    mine = [v for v in ins.srcs if v is not None and v.__class__ is tuple and
            (v[0], v[1]) in blocks]
    if len(mine) != 1 or _row_slice(mine[0]) is None:
        return []
    key = (mine[0][0], mine[0][1])
    rows = _row_slice(mine[0])[:2]
    passed_r, passed_w = set(), set()
    group = []
    for m in range(k + 1, min(len(ins_list), k + window)):
        if m in moved:
            continue
        J = ins_list[m]
        if J.epoch != ins.epoch:
            break
        r, w = _footprint(J)
        reads = [v for v in J.srcs if v is not None and v.__class__ is tuple and
                 (v[0], v[1]) in blocks]
        if (len(reads) == 1 and (reads[0][0], reads[0][1]) == key and
                _row_slice(reads[0]) is not None and _row_slice(reads[0])[:2] == rows and
                not (w & (passed_r | passed_w)) and not (r & passed_w)):
            group.append(m)
            moved.add(m)
            continue
        passed_r |= r
        passed_w |= w
    return group


def reload_at_use(trace, ins_list, blocks, window=128):
    """ins_list with the loads of `blocks` ({(buf, blk): (load ins, hbm view, hbm free
    stride)}) dropped and, before every instruction reading one of those tiles, a load of
    just the bytes it reads (the instruction then reads that). The later readers of the same
    tile that can move up next to the first (_gather: the loop over column halves of a
    matmul interchanged with the loop over the block's tiles) share one load of the span of
    columns they read together. Returns (list, loads added)."""
    out = []
    added = 0
    drop = set(id(v[0]) for v in blocks.values())
    ins_list = [i for i in ins_list if id(i) not in drop]
    moved = set()
    for k, ins in enumerate(ins_list):
        if k in moved:
            continue
        srcs = ins.srcs
        hit = False
        for v in srcs:
            if v is not None and v.__class__ is tuple and (v[0], v[1]) in blocks:
                hit = True
                break
        if not hit:
            out.append(ins)
            continue
        group = _gather(ins_list, k, blocks, moved, window)
        if group:
            added += _shared_load(trace, out, [ins] + [ins_list[m] for m in group], blocks)
            continue
        new = []
        for v in srcs:
            blk = blocks.get((v[0], v[1])) if v is not None and v.__class__ is tuple else None
            if blk is None:
                new.append(v)
                continue
            ld, dv = _slice_load(trace, ins, v, blk[1], blk[2], blk[0].loc,
                                 blk[0].a.get('api', 'nl.load'))
            out.append(ld)
            added += 1
            new.append(dv)
        c = Ins(ins.op, ins.eng, ins.loc, ins.nest, ins.dst, tuple(new), ins.a, ins.epoch)
        out.append(c)
    return out, added


def _shared_load(trace, out, group, blocks):
    """One load of the columns the instructions of `group` read of one block tile, then the
    instructions reading it; appended to out. Returns 1 (the loads added)."""
    views = []
    for ins in group:
        for j, v in enumerate(ins.srcs):
            if v is not None and v.__class__ is tuple and (v[0], v[1]) in blocks:
                views.append((j, v))
    first = views[0][1]
    row0, pu = _row_slice(first)[:2]
    lo = min(_row_slice(v)[2] for _, v in views)
    hi = max(_row_slice(v)[2] + _row_slice(v)[3] for _, v in views)
    b = first[0]
    cover = (b, first[1], row0 * b.F + lo, ((b.F, pu), (1, hi - lo)))
    blk = blocks[(b, first[1])]
    ld, dv = _slice_load(trace, group[0], cover, blk[1], blk[2], blk[0].loc,
                         blk[0].a.get('api', 'nl.load'))
    out.append(ld)
    for ins, (j, v) in zip(group, views):
        new = list(ins.srcs)
        new[j] = (dv[0], 0, _row_slice(v)[2] - lo, (dv[3][0], (1, _row_slice(v)[3])))
        out.append(Ins(ins.op, ins.eng, ins.loc, ins.nest, ins.dst, tuple(new), ins.a,
                       ins.epoch))
    return 1
