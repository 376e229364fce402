"""fuse.py: the compiler's rewrite of an elementwise op of x with a scaled copy of x.

A VectorE tensor_tensor whose operands are a tile x and c * x (a one-operation tensor_scalar
multiply of the same x by a number, read by nothing else) is a function of x alone, which
the compiler evaluates as one single-input operation and leaves the tensor_scalar out:

    x + c*x, c*x + x   ->  tensor_scalar x * (1 + c)   (its engine picked as any other)
    x - c*x            ->  tensor_scalar x * (1 - c)
    c*x - x            ->  tensor_scalar x * (c - 1)
    x * c*x, c*x * x   ->  ScalarE activation square(sqrt(c) * x)   (c > 0)

Evidence (docs/nki.md, "Compiler decisions"): the measured NKI adamw kernel on trn1 keeps
VectorE busy 5,860 cycles per 512-element tile, what four FP32 tensor_tensors and its
reciprocal cost, not the six tensor_tensors its source writes; its two tensor_tensors of
this form are the ones missing. The numbers the kernel computes do not change: the shim
records them before compiling.
"""
import math

from .ops import ACT, DVE
from .record import Ins


def _key(v):
    return (v[0].id, v[1])


def _same(u, v):
    return u[0] is v[0] and u[1:] == v[1:]


def _scaled_copy(ts, x):
    """c when ts is `x * c` (a number, one operation, engine left to the compiler)."""
    a = ts.a
    if (ts.op != 'ts' or ts.eng is not None or a.get('op0') != 'multiply' or a.get('ap0')
            or a.get('op1') is not None or a.get('imm0') is None or len(ts.srcs) != 1
            or not _same(ts.srcs[0], x)):
        return None
    return a['imm0']


def _rewrite(t, x, c, scaled_first):
    """The single-input instruction replacing tensor_tensor t, or None."""
    alu = t.a.get('alu')
    a = {'api': t.a.get('api')}
    if 'clips' in t.a:
        a['clips'] = t.a['clips']
    if alu == 'multiply':
        if c <= 0:
            return None
        a.update({'fn': 'square', 'scale': math.sqrt(c), 'bias': None, 'bias_ap': False,
                  'scale_ap': False})
        op, eng = 'act', ACT
    else:
        if alu == 'add':
            k = 1.0 + c
        elif alu == 'subtract':
            k = c - 1.0 if scaled_first else 1.0 - c
        else:
            return None
        a.update({'op0': 'multiply', 'imm0': k, 'rev0': False, 'op1': None, 'imm1': None,
                  'rev1': False, 'ap0': False, 'ap1': False})
        op, eng = 'ts', None
    n = Ins(op, eng, t.loc, t.nest, t.dst, (x,), a, t.epoch)
    return n


def unary(prog, ins_list):
    """ins_list with every tensor_tensor of x and c * x rewritten (decision `fuse`)."""
    readers = {}
    writer = {}
    for i, ins in enumerate(ins_list):
        for v in ins.srcs:
            if v[0].onchip:
                readers.setdefault(_key(v), []).append(i)
        if ins.dst is not None and ins.dst[0].onchip:
            writer.setdefault(_key(ins.dst), []).append(i)
    drop = set()
    out = list(ins_list)
    counts = {}
    for j, t in enumerate(ins_list):
        if (t.op != 'tt' or t.eng != DVE or len(t.srcs) != 2
                or t.a.get('alu') not in ('add', 'subtract', 'multiply')):
            continue
        for k in (0, 1):
            sv, x = t.srcs[k], t.srcs[1 - k]
            if not sv[0].onchip or not x[0].onchip:
                continue
            ws = [i for i in writer.get(_key(sv), ()) if i < j]
            if not ws or ws[-1] in drop or readers.get(_key(sv)) != [j]:
                continue
            i = ws[-1]
            ts = ins_list[i]
            if not _same(ts.dst, sv):
                continue
            c = _scaled_copy(ts, x)
            if c is None or any(i < w < j for w in writer.get(_key(x), ())):
                continue
            n = _rewrite(t, x, c, k == 0)
            if n is None:
                continue
            out[j] = n
            drop.add(i)
            key = (t.loc, n.op)
            counts[key] = counts.get(key, 0) + 1
            break
    for (loc, op), n in counts.items():
        prog.decisions.append(('fuse', loc, {
            'op': 'tensor_tensor', 'into': 'activation' if op == 'act' else 'tensor_scalar',
            'count': n}))
    return [ins for i, ins in enumerate(out) if i not in drop]
