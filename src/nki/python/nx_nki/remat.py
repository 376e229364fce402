"""remat.py: re-loading a block of loaded tiles at each use instead of keeping it in SBUF.

When a kernel loads a block of tiles from HBM and reads it over an inner loop, and that
block does not fit beside the loop's double-buffered tiles, the Neuron compiler does not
keep the block resident: it loads, before each instruction that reads a tile of the block,
just the bytes that instruction reads, from the HBM tensor they came from (docs/nki.md,
"Compiler decisions", re-loads). This module makes that rewrite on a recorded trace; the
compiler (compiler.py) decides which blocks.
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


def reload_at_use(trace, ins_list, blocks):
    """ins_list with the loads of `blocks` ({(buf, blk): (load ins, hbm view, hbm free
    stride)}) dropped and, before every instruction reading one of those tiles, a load of
    just the bytes it reads (the instruction then reads that). Returns (list, loads added)."""
    out = []
    added = 0
    drop = set(id(v[0]) for v in blocks.values())
    for ins in ins_list:
        if id(ins) in drop:
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
