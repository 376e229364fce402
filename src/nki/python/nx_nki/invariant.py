"""invariant.py: loop-invariant work done once (hoisting on the unrolled trace).

A kernel that loads or computes the same tile in every iteration of a loop whose variable
its addresses do not use (bmm: the lhs tiles loaded and transposed again for each of four
column blocks) asks for the same bytes several times. The Neuron compiler hoists such work
out of the loop and keeps its result (docs/nki.md, "Compiler decisions", hoisting). On the
recorded trace, where every loop is unrolled, that is value numbering: a tile whose whole
history of writes (the operation, its operands' contents, the bytes written) is the history
of an earlier tile that is never written again is that tile; its writers are dropped and its
readers read the earlier tile, whose lifetime grows. A PSUM tile is only dropped when no
remaining instruction reads it (its readers were dropped too: PSUM is 16 KiB). The compiler
(compiler.py) accepts the result allocation site by allocation site, only while the live
tiles still fit SBUF.
"""
from .record import Ins

_WRITE_OPS_EXCLUDED = ('dead',)
_PLAIN = frozenset((int, float, str, bool, bytes, type(None)))   # their own stand-ins


def _freeze(v):
    """A hashable stand-in for an operation attribute (an object's identity when it has no
    value of its own, so that unknown attributes never make two operations equal)."""
    c = v.__class__
    if c in _PLAIN:
        return v
    if c in (tuple, list):
        return tuple([x if x.__class__ in _PLAIN else _freeze(x) for x in v])
    if c is dict:
        # (an operation's attributes are mostly plain values: no call for those)
        return tuple(sorted([(k, x if x.__class__ in _PLAIN else _freeze(x))
                             for k, x in v.items()]))
    try:
        hash(v)
    except TypeError:
        return ('id', id(v))
    if hasattr(v, 'dtype') and hasattr(v, 'shape'):
        return ('id', id(v))
    return v


class Values:
    """Content numbers of every on-chip tile after a pass over the trace: tiles holding the
    same sequence of writes of the same values get the same final number."""

    def __init__(self, ins_list):
        self.content = {}         # tile (buf, blk) -> content number
        self.first = {}           # tile -> index of its first write
        self.last = {}            # tile -> index of its last write
        self.writers = {}         # tile -> indices of the instructions writing it
        self.readers = {}         # tile -> indices of the instructions reading it
        self.multi = set()        # tiles written by an instruction that writes several
        intern = {}
        same = {}                 # one of each equal attribute tuple and value kept (the
                                  # keys of intern refer to them: loops repeat most)
        hbm = {}                  # id(hbm buffer) -> how many writes it has had
        content = self.content
        for k, ins in enumerate(ins_list):
            if ins.op in _WRITE_OPS_EXCLUDED:
                continue
            ops = []
            for v in ins.srcs:
                if v is None or v.__class__ is not tuple:
                    ops.append(_freeze(v))
                    continue
                b = v[0]
                if b.kind == 'hbm':
                    ops.append(('h', id(b), hbm.get(id(b), 0), v[2], v[3]))
                else:
                    t = (b, v[1])
                    ops.append((b.kind, content.get(t, 0), v[2], v[3], b.dtype))
                    self.readers.setdefault(t, []).append(k)
            fa = _freeze(ins.a)
            val = (ins.op, ins.eng, same.setdefault(fa, fa), tuple(ops))
            val = same.setdefault(val, val)
            wsrc = ins.a.get('wsrc', ()) if ins.a else ()
            outs = [ins.dst] + [ins.srcs[j] for j in wsrc]
            for w in outs:
                if w is None:
                    continue
                b = w[0]
                if b.kind == 'hbm':
                    hbm[id(b)] = hbm.get(id(b), 0) + 1
                    continue
                t = (b, w[1])
                key = (content.get(t, 0), val, b.kind, b.dtype, b.P, b.F, w[2], w[3])
                c = intern.get(key)
                if c is None:
                    c = intern[key] = len(intern) + 1
                content[t] = c
                self.first.setdefault(t, k)
                self.last[t] = k
                self.writers.setdefault(t, []).append(k)
                if len(outs) > 1:
                    self.multi.add(t)

    def aliases(self):
        """{tile: the earlier tile it equals}: same final content, the earlier one written
        completely before the later one's first write and never again."""
        seen = {}
        out = {}
        for t in sorted(self.content, key=self.first.__getitem__):
            c = self.content[t]
            e = seen.get(c)
            if e is None:
                seen[c] = t
                continue
            if t in self.multi or e in self.multi or self.last[e] >= self.first[t]:
                continue
            out[t] = e
        return out


def rewrite(ins_list, vals, alias, accepted):
    """ins_list without the writers of the SBUF tiles `accepted` (tiles of `alias`), their
    readers reading the earlier tile instead, and without the writers of the other tiles of
    `alias` that nothing left reads (the PSUM results and operands of dropped work). Returns
    (list, instructions dropped)."""
    drop = set()
    for t in accepted:
        drop.update(vals.writers[t])
    rest = [t for t in alias if t not in accepted]
    changed = True
    while changed:
        changed = False
        left = []
        for t in rest:
            if all(r in drop for r in vals.readers.get(t, ())):
                drop.update(vals.writers[t])
                changed = True
            else:
                left.append(t)
        rest = left
    out = []
    for k, ins in enumerate(ins_list):
        if k in drop:
            continue
        srcs = ins.srcs
        new = None
        for j, v in enumerate(srcs):
            if v is None or v.__class__ is not tuple:
                continue
            t = (v[0], v[1])
            if t in accepted:
                if new is None:
                    new = list(srcs)
                e = alias[t]
                new[j] = (e[0], e[1]) + v[2:]
        if new is not None:
            ins = Ins(ins.op, ins.eng, ins.loc, ins.nest, ins.dst, tuple(new), ins.a, ins.epoch)
        out.append(ins)
    return out, len(drop)
