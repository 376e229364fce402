"""ops.py: every NKI operation as one recorded instruction, plus its numerics.

Each function checks its operands, creates the result tile (a temp buffer the compiler
allocates), appends one Ins to the trace and, when numerics are on, computes the values
with numpy in fp32 and rounds them to the result's dtype. Assignment (`t[...] = op(...)`)
retargets the op's destination to `t` instead of copying; `psum += nc_matmul(...)` folds
into the matmul's accumulate flag (see docs/nki.md, "Compiler decisions").
"""
import sys

import numpy as np

from . import dtypes as D
from . import errors
from . import numerics as N
from . import record
from .index import Mask
from .record import here
from .tensor import Tensor, Buf, npview, new_temp, recheck, NUM_PARTITIONS, _rowmajor

PE, DVE, ACT, POOL, SP = 0, 1, 2, 3, 4
ENGINE_NAMES = ('Tensor', 'Vector', 'Scalar', 'GpSimd', 'Sync')

# clocks (GHz) used only to balance engine picks while recording
_CLK = {'trn2': (2.4, 0.96, 1.2, 1.2, 1.2), 'trn1': (2.8, 1.12, 1.4, 1.4, 1.4)}


class Engine:
    __slots__ = ('eng', 'name')

    def __init__(self, eng, name):
        self.eng = eng
        self.name = name

    def __repr__(self):
        return 'nisa.' + self.name


tensor_engine = Engine(PE, 'tensor_engine')
vector_engine = Engine(DVE, 'vector_engine')
scalar_engine = Engine(ACT, 'scalar_engine')
gpsimd_engine = Engine(POOL, 'gpsimd_engine')
sync_engine = Engine(SP, 'sync_engine')
unknown_engine = Engine(None, 'unknown_engine')


def engine_of(e, api, allowed):
    """The engine a user asked for (None = the compiler's pick), checked against the op."""
    if e is None or e is unknown_engine:
        return None
    if isinstance(e, Engine):
        e = e.eng
    if e not in allowed:
        raise errors.located('%s cannot run on the %s engine (allowed: %s)'
                             % (api, ENGINE_NAMES[e], ', '.join(ENGINE_NAMES[a] for a in allowed)),
                             api, 3)
    return e


# --- op identities: nl.add, nl.exp, np.add ... ------------------------------------------

class OpFn:
    """An NKI function that is also an operator identity (nl.add, nl.max, nl.exp ...)."""
    __slots__ = ('opname', 'kind', 'impl', 'api')

    def __init__(self, opname, kind, impl, api):
        self.opname = opname      # ALU or activation name (numerics.py)
        self.kind = kind          # 'alu' or 'act'
        self.impl = impl
        self.api = api

    def __call__(self, *a, **k):
        try:
            return self.impl(*a, **k)
        except errors.NkiError:
            raise
        except (TypeError, ValueError, KeyError, IndexError) as e:
            raise errors.located(str(e), self.api, 2) from None

    def __repr__(self):
        return self.api


_UFUNC = {'add': 'add', 'subtract': 'subtract', 'multiply': 'multiply', 'divide': 'divide',
          'true_divide': 'divide', 'maximum': 'max', 'minimum': 'min', 'power': 'power',
          'equal': 'equal', 'not_equal': 'not_equal', 'greater': 'greater',
          'greater_equal': 'greater_equal', 'less': 'less', 'less_equal': 'less_equal',
          'logical_and': 'logical_and', 'logical_or': 'logical_or',
          'logical_xor': 'logical_xor', 'bitwise_and': 'bitwise_and',
          'bitwise_or': 'bitwise_or', 'bitwise_xor': 'bitwise_xor', 'left_shift': 'left_shift',
          'right_shift': 'right_shift', 'exp': 'exp', 'tanh': 'tanh', 'sqrt': 'sqrt',
          'log': 'log', 'sin': 'sin', 'cos': 'cos', 'abs': 'abs', 'absolute': 'abs',
          'negative': 'negative', 'sign': 'sign', 'square': 'square', 'reciprocal': 'reciprocal',
          'amax': 'max', 'amin': 'min', 'max': 'max', 'min': 'min', 'sum': 'add'}


def _op_name(op, table, kind, api, what):
    if isinstance(op, OpFn) and (op.kind == kind or op.opname in table):
        return op.opname
    if callable(op):
        n = _UFUNC.get(getattr(op, '__name__', ''))
        if n and n in table:
            return n
    if isinstance(op, str) and op in table:
        return op
    raise errors.located('%r is not %s' % (op, what), api, 4)


def alu_name(op, api):
    return _op_name(op, N.ALU, 'alu', api, 'an ALU operator')


def act_name(op, api):
    return _op_name(op, N.ACT, 'act', api, 'an activation function')


# --- operands -----------------------------------------------------------------------------

def operand(x, api, onchip=True):
    """View tuple of a Tensor operand."""
    if not isinstance(x, Tensor):
        raise errors.located('expected an NKI tensor, got %s' % type(x).__name__, api, 3)
    b = x.buf
    if onchip and b.kind == 'hbm':
        raise errors.located('%s reads on-chip tiles (SBUF/PSUM); %s is in HBM: nl.load it '
                             'first' % (api, b.describe()), api, 3)
    if x.blk is None:
        if b.nblk == 1 and not x.bpre:
            return (b, 0, 0, b.tile_axes())
        raise errors.located('%s has block dims %s: index them to pick one tile'
                             % (b.describe(), b.bshape), api, 3)
    if b.temp:
        b.nread += 1                         # reads of a temp (see assign)
    return (b, x.blk, x.off, x.axes)


def _clips(mask, api):
    if mask is None or mask is True:
        return None
    if not isinstance(mask, Mask):
        raise errors.located('mask= takes index-grid predicates such as (i * 128 + ix < n)',
                             api, 3)
    return mask.clips()


def clip(v, clips, space):
    """v clipped by the mask's axis ranges (axes whose size is the iteration space's)."""
    if not clips:
        return v
    buf, blk, off, axes = v
    axes = list(axes)
    for pos, (lo, hi) in clips.items():
        if pos < len(axes) and pos < len(space):
            s, n = axes[pos]
            if n == space[pos] and n > 1 or (n == 1 and space[pos] == 1):
                a = max(0, lo)
                b = min(n, hi)
                if b <= a:
                    return None
                off += a * s
                axes[pos] = (s, b - a)
    return (buf, blk, off, tuple(axes))


def _prep(tensors, views, clips, space, api):
    """Applies the mask to every view; re-checks deferred bounds. None: masked away."""
    out = []
    for t, v in zip(tensors, views):
        if v is None:
            out.append(None)
            continue
        if clips:
            v = clip(v, clips, space)
            if v is None:
                return None
        if t is not None and t.oob is not None:
            recheck(t, clips, api)
        out.append(v)
    return out


def space_of(v):
    ax = v[3]
    if len(ax) == 2:                # (the common case without a comprehension's call)
        return (ax[0][1], ax[1][1])
    return tuple([n for _, n in ax])


def npart(v):
    return v[3][0][1] if v[3] else 1


def free_elems(v):
    ax = v[3]
    if len(ax) == 2:
        return ax[1][1]
    n = 1
    for _, c in ax[1:]:
        n *= c
    return n


def _sq(shape):
    return [n for n in shape if n != 1]


def same_shape(a, b):
    return a == b or (a[0] == b[0] and _sq(a[1:]) == _sq(b[1:]))


_B_new = Buf.__new__


_TILE_SHAPES = {}


def _tile_shape(shape):
    """(shape, P, free shape, F, tile axes) of a result shape, made once per shape (the
    results of one shape share its tuple)."""
    r = _TILE_SHAPES.get(shape)
    if r is None:
        P = shape[0]
        fs = tuple(shape[1:])
        F = 1
        for x in fs:
            F *= x
        r = _TILE_SHAPES[shape] = (shape, P, fs, F, ((F, P),) + _rowmajor(fs))
    return r


def result(tr, loc, shape, dtype, kind='sbuf'):
    """A one-tile temp buffer for an op's result and the kernel's handle on it."""
    if shape.__class__ is not tuple:
        shape = tuple(shape)
    if len(shape) < 2:
        shape = (shape[0], 1) if shape else (1, 1)
    if shape[0] > NUM_PARTITIONS:
        raise errors.located('a tile of %d partitions: at most %d' % (shape[0], NUM_PARTITIONS),
                             None, 3)
    shape, P, fs, F, taxes = _TILE_SHAPES.get(shape) or _tile_shape(shape)
    b = _B_new(Buf)
    b.kind = kind
    b.dtype = dtype
    b.shape = shape
    b.site = loc
    b.P = P
    b.fshape = fs
    b.taxes = taxes
    b.F = F
    # (a PSUM result's zeros stay None and its mm_written is made by its first matmul write:
    # most are folded into an accumulation and never written again)
    b.temp = True
    bufs = tr.bufs
    b.id = len(bufs)
    bufs.append(b)
    return b, Tensor(b, 0, 0, taxes)


def _est(tr, eng, v, factor=1.0):
    """Rough cost (ns) of an engine instruction, to balance the compiler's engine picks."""
    n = free_elems(v) if v is not None else 1
    cyc = max(n * factor, 64) + 60
    tr.busy[eng] += cyc / _CLK.get(tr.target, _CLK['trn2'])[eng]


def pick(tr, cands):
    """Engine pick for unknown_engine: the least busy candidate so far (ties: list order)."""
    best = cands[0]
    bb = tr.busy[best]
    for e in cands[1:]:
        if tr.busy[e] < bb:
            best, bb = e, tr.busy[e]
    return best


def store_values(v, vals, dtype=None):
    """Writes numerics into view v (rounded to its buffer's dtype)."""
    dst = npview(v)
    vals = np.asarray(vals)
    if vals.shape != dst.shape:
        if vals.size == dst.size:
            vals = vals.reshape(dst.shape)
        else:
            vals = np.broadcast_to(vals, dst.shape)
    dst[...] = D.cast(vals, v[0].dtype)


def load_values(v):
    return npview(v)


def _numvals(x, space=None):
    """Values of an operand (a view tuple, or a Python scalar)."""
    if isinstance(x, tuple):
        return npview(x).astype(np.float32, copy=False)
    return np.float32(x)


# --- DMA ---------------------------------------------------------------------------------

def load(src, mask=None, dtype=None, api='nl.load', transpose=False, kind='load', **kw):
    tr = record.CUR or record.cur(api)
    loc = here()
    if src.__class__ is not Tensor:
        raise errors.located('expected an HBM tensor, got %s' % type(src).__name__, api, 2)
    sb = src.buf
    if sb.kind != 'hbm':
        raise errors.located('%s reads HBM; %s is on chip (use nl.copy)' % (api, sb.describe()),
                             api, 2)
    if src.blk is None:
        sv = operand(src, api, onchip=False)
    else:
        sv = (sb, src.blk, src.off, src.axes)
    shape = space_of(sv)
    if transpose:
        if len(shape) != 2:
            raise errors.located('load_transpose2d takes a 2-D view', api, 2)
        shape = (shape[1], shape[0])
    if shape and shape[0] > NUM_PARTITIONS:
        raise errors.located('loading %d partitions: a tile has at most %d (the first dim of '
                             'the view is the partition dim)' % (shape[0], NUM_PARTITIONS), api, 2)
    odt = (D.as_dtype(dtype) if dtype is not None else None) or sb.dtype
    b, out = result(tr, loc, shape, odt)
    dv = (b, 0, 0, out.axes)
    if mask is not None or src.oob is not None:
        clips = _clips(mask, api)
        vs = _prep((out, src), (dv, sv), clips, space_of(dv) if not transpose else shape, api)
        if vs is None:
            return out
        dv, sv = vs
    a = {'kind': kind, 'tr': transpose, 'api': api}
    if mask is not None:
        a['clips'] = _clips(mask, api)
    ins = tr.add('dma', None, loc, dv, (sv,), a)
    b.prod = ins             # the producer (see assign)
    if tr.numerics:
        vals = npview(sv)
        if transpose:
            vals = vals.T
        store_values(dv, vals)
    return out


def store(dst, value, mask=None, api='nl.store'):
    tr = record.cur(api)
    loc = here()
    if not isinstance(dst, Tensor) or dst.buf.kind != 'hbm':
        raise errors.located('the destination of %s must be an HBM tensor' % api, api, 2)
    dv = operand(dst, api, onchip=False)
    if not isinstance(value, Tensor):
        raise errors.located('value= must be an on-chip tile, got %s' % type(value).__name__,
                             api, 2)
    sv = operand(value, api)
    if not same_shape(space_of(dv), space_of(sv)):
        raise errors.located('storing a tile of shape %s into a view of shape %s'
                             % (space_of(sv), space_of(dv)), api, 2)
    clips = _clips(mask, api)
    vs = _prep((dst, value), (dv, sv), clips, space_of(sv), api)
    if vs is None:
        return
    dv, sv = vs
    tr.add('dma', None, loc, dv, (sv,), {'kind': 'store', 'api': api})
    if tr.numerics:
        store_values(dv, npview(sv))


def dma_copy(dst, src, api='nisa.dma_copy', mask=None, dge=None, engine=None):
    """A DMA between any two views (HBM or on chip), the destination given."""
    tr = record.cur(api)
    loc = here()
    if not isinstance(dst, Tensor) or not isinstance(src, Tensor):
        raise errors.located('dst= and src= must be NKI tensors', api, 2)
    dv = operand(dst, api, onchip=False)
    sv = operand(src, api, onchip=False)
    if src.buf.kind == 'psum':
        raise errors.located('DMA cannot read PSUM (copy the tile to SBUF first)', api, 2)
    if not same_shape(space_of(dv), space_of(sv)):
        tot = lambda s: int(np.prod(s))
        if tot(space_of(dv)) != tot(space_of(sv)):
            raise errors.located('copying shape %s into shape %s' % (space_of(sv), space_of(dv)),
                                 api, 2)
    clips = _clips(mask, api)
    vs = _prep((dst, src), (dv, sv), clips, space_of(dv), api)
    if vs is None:
        return dst
    dv, sv = vs
    kind = 'load' if src.buf.kind == 'hbm' and dst.buf.kind != 'hbm' else \
        'store' if dst.buf.kind == 'hbm' and src.buf.kind != 'hbm' else \
        'hbm' if dst.buf.kind == 'hbm' else 'chip'
    trig = None
    if engine is not None:
        trig = engine.eng if isinstance(engine, Engine) else engine
    tr.add('dma', trig, loc, dv, (sv,), {'kind': kind, 'api': api, 'dge': dge})
    if tr.numerics:
        store_values(dv, npview(sv))
    return dst


# --- compute ops ---------------------------------------------------------------------------

def _finish(tr, api, loc, op, eng, dst_t, dst_v, srcs_t, srcs_v, a, mask):
    if mask is None:
        for t in srcs_t:
            if t.oob is not None:
                break
        else:
            return tr.add(op, eng, loc, dst_v, tuple(srcs_v), a)
    clips = _clips(mask, api)
    vs = _prep((dst_t,) + tuple(srcs_t), (dst_v,) + tuple(srcs_v), clips, space_of(dst_v), api)
    if vs is None:
        return None
    if clips:
        a['clips'] = clips
    ins = tr.add(op, eng, loc, vs[0], tuple(vs[1:]), a)
    return ins


def _new(tr, api, loc, shape, dtype, kind='sbuf'):
    b, out = result(tr, loc, shape, dtype, kind)
    return b, out, (b, 0, 0, out.axes)


def _producer(b, ins):
    b.prod = ins


def tensor_tensor(x, y, op, dtype=None, mask=None, engine=None, api='nisa.tensor_tensor'):
    tr = record.cur(api)
    loc = here()
    name = alu_name(op, api)
    xv = operand(x, api)
    yv = operand(y, api)
    sx, sy = space_of(xv), space_of(yv)
    if not same_shape(sx, sy):
        if sy[0] == sx[0] and all(n == 1 for n in sy[1:]):
            return tensor_scalar(x, op, y, dtype=dtype, mask=mask, engine=engine, api=api)
        if sx[0] == sy[0] and all(n == 1 for n in sx[1:]):
            return tensor_scalar(y, op, x, reverse0=True, dtype=dtype, mask=mask, engine=engine,
                                 api=api)
        if sy[0] == 1 and sx[0] > 1 or sx[0] == 1 and sy[0] > 1:
            raise errors.located('operands of shapes %s and %s: broadcasting across partitions '
                                 'needs an explicit broadcast_to' % (sx, sy), api, 2)
        raise errors.located('operands of shapes %s and %s do not match' % (sx, sy), api, 2)
    if xv[0].kind == 'psum' and yv[0].kind == 'psum':
        raise errors.located('tensor_tensor cannot read both operands from PSUM', api, 2)
    odt = D.as_dtype(dtype) or D.promote(x.dtype, y.dtype)
    eng = engine_of(engine, api, (DVE, POOL))
    if eng is None:
        eng = POOL if name in ('power',) else DVE
    b, out, dv = _new(tr, api, loc, sx, odt)
    ins = _finish(tr, api, loc, 'tt', eng, out, dv, (x, y), (xv, yv), {'alu': name, 'api': api},
                  mask)
    if ins is None:
        return out
    _producer(b, ins)
    _est(tr, eng, ins.dst, 2.0 if name != 'divide' else 8.0)
    if tr.numerics:
        store_values(ins.dst, N.alu(name, _numvals(ins.srcs[0]),
                                    _numvals(ins.srcs[1]).reshape(npview(ins.srcs[0]).shape)))
    return out


def _scalar_operand(o, api):
    """(immediate, view) of a tensor_scalar operand: a number or a (P, 1) tile."""
    if o is None:
        return None, None
    if isinstance(o, Tensor):
        v = operand(o, api)
        if any(n != 1 for _, n in v[3][1:]):
            raise errors.located('a tensor_scalar operand tile must be (P, 1), got %s'
                                 % (space_of(v),), api, 3)
        return None, v
    if isinstance(o, (int, float, np.number, bool)):
        return float(o), None
    raise errors.located('operand must be a number or a (P, 1) tile, got %s' % type(o).__name__,
                         api, 3)


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                  dtype=None, mask=None, engine=None, api='nisa.tensor_scalar'):
    tr = record.cur(api)
    loc = here()
    n0 = alu_name(op0, api)
    n1 = alu_name(op1, api) if op1 is not None else None
    xv = operand(data, api)
    i0, v0 = _scalar_operand(operand0, api)
    i1, v1 = _scalar_operand(operand1, api) if op1 is not None else (None, None)
    for v in (v0, v1):
        if v is not None and npart(v) != npart(xv):
            raise errors.located('operand tile has %d partitions, data %d'
                                 % (npart(v), npart(xv)), api, 2)
    odt = D.as_dtype(dtype) or data.dtype
    eng = engine_of(engine, api, (DVE, ACT, POOL))  # None: the compiler picks (compiler.py)
    b, out, dv = _new(tr, api, loc, space_of(xv), odt)
    srcs_t = [data]
    srcs_v = [xv]
    if v0 is not None:
        srcs_t.append(operand0)
        srcs_v.append(v0)
    if v1 is not None:
        srcs_t.append(operand1)
        srcs_v.append(v1)
    a = {'op0': n0, 'imm0': i0, 'rev0': bool(reverse0), 'op1': n1, 'imm1': i1,
         'rev1': bool(reverse1), 'ap0': v0 is not None, 'ap1': v1 is not None, 'api': api}
    ins = _finish(tr, api, loc, 'ts', eng, out, dv, srcs_t, srcs_v, a, mask)
    if ins is None:
        return out
    _producer(b, ins)
    if eng is not None:
        _est(tr, eng, ins.dst, 8.0 if 'divide' in (n0, n1) else 1.0)
    if tr.numerics:
        x = _numvals(ins.srcs[0])
        k = 2 if a['ap0'] else 1
        r = scalar_op(n0, x, i0, ins.srcs[1] if a['ap0'] else None, reverse0)
        if n1 is not None:
            r = scalar_op(n1, r, i1, ins.srcs[k] if a['ap1'] else None, reverse1)
        store_values(ins.dst, r)
    return out


def scalar_op(name, x, imm, col, reverse):
    """x (name) operand, the operand a number or a per-partition column view."""
    if col is not None:
        o = _numvals(col).reshape((x.shape[0],) + (1,) * (x.ndim - 1))
    else:
        o = np.float32(imm)
    return N.alu(name, o, x) if reverse else N.alu(name, x, o)


def _norm_axes(axis, nd, api):
    if axis is None:
        return tuple(range(1, nd))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    ax = tuple(sorted(int(a) % nd for a in axis))
    if 0 in ax:
        raise errors.located('reductions run along free dims (axis 0 is the partition dim)',
                             api, 3)
    return ax


def _reduced_last(v, ax):
    """View v with the reduced axes moved innermost (an access pattern may walk its free
    axes in any order), so the engine reduces its trailing axes."""
    axes = v[3]
    keep = [axes[i] for i in range(len(axes)) if i not in ax]
    red = [axes[i] for i in ax]
    return (v[0], v[1], v[2], tuple(keep + red))


def tensor_reduce(op, data, axis, negate=False, keepdims=False, dtype=None, mask=None,
                  engine=None, api='nisa.tensor_reduce'):
    tr = record.cur(api)
    loc = here()
    name = alu_name(op, api)
    xv = operand(data, api)
    sh = space_of(xv)
    ax = _norm_axes(axis, len(sh), api)
    if keepdims:
        oshape = tuple(1 if i in ax else n for i, n in enumerate(sh))
    else:
        oshape = tuple(n for i, n in enumerate(sh) if i not in ax)
    odt = D.as_dtype(dtype) or data.dtype
    eng = engine_of(engine, api, (DVE, POOL))
    if eng is None:
        eng = DVE
    b, out, dv = _new(tr, api, loc, oshape, odt)
    a = {'alu': name, 'negate': bool(negate), 'naxes': len(ax), 'api': api}
    clips = _clips(mask, api)
    vs = _prep((data,), (xv,), clips, sh, api)
    if vs is None:
        return out
    xv = vs[0]
    if clips and 0 in clips:
        dv = clip(dv, {0: clips[0]}, space_of(dv))
        a['clips'] = {0: clips[0]}
    ins = tr.add('tr', eng, loc, dv, (_reduced_last(xv, ax),), a)
    _producer(b, ins)
    _est(tr, eng, xv, 1.0)
    if tr.numerics:
        r = N.reduce(name, _numvals(xv), ax)
        if negate:
            r = -r
        store_values(dv, r.reshape(space_of(dv)) if r.size == free_elems(dv) * npart(dv) else r)
    return out


def activation(op, data, bias=None, scale=1.0, dtype=None, mask=None, reduce_op=None,
               reduce_res=None, api='nisa.activation'):
    tr = record.cur(api)
    loc = here()
    fn = act_name(op, api)
    xv = operand(data, api)
    srcs_t, srcs_v = [data], [xv]
    bv = sv = None
    if bias is not None:
        if isinstance(bias, Tensor):
            bv = operand(bias, api)
            if any(n != 1 for _, n in bv[3][1:]) or npart(bv) != npart(xv):
                raise errors.located('bias must be a (P, 1) tile matching the data\'s %d '
                                     'partitions, got %s' % (npart(xv), space_of(bv)), api, 2)
            srcs_t.append(bias)
            srcs_v.append(bv)
        else:
            bias = float(bias)
    if isinstance(scale, Tensor):
        sv = operand(scale, api)
        if any(n != 1 for _, n in sv[3][1:]):
            raise errors.located('scale must be a number or a (P, 1) tile', api, 2)
        srcs_t.append(scale)
        srcs_v.append(sv)
        simm = None
    else:
        simm = float(scale)
    odt = D.as_dtype(dtype) or data.dtype
    b, out, dv = _new(tr, api, loc, space_of(xv), odt)
    a = {'fn': fn, 'scale': simm, 'bias': bias if bv is None else None,
         'bias_ap': bv is not None, 'scale_ap': sv is not None, 'api': api}
    if reduce_op is not None:
        a['reduce'] = alu_name(reduce_op, api)
        if not isinstance(reduce_res, Tensor):
            raise errors.located('reduce_op= needs reduce_res= (a (P, 1) tile)', api, 2)
        rv = operand(reduce_res, api)
        srcs_t.append(reduce_res)
        srcs_v.append(rv)
        a['res_idx'] = len(srcs_v) - 1
        a['wsrc'] = (len(srcs_v) - 1,)
    ins = _finish(tr, api, loc, 'act', ACT, out, dv, srcs_t, srcs_v, a, mask)
    if ins is None:
        return out
    _producer(b, ins)
    _est(tr, ACT, ins.dst)
    if tr.numerics:
        x = _numvals(ins.srcs[0])
        k = 1
        col = (x.shape[0],) + (1,) * (x.ndim - 1)
        if a['bias_ap']:
            bb = _numvals(ins.srcs[k]).reshape(col)
            k += 1
        else:
            bb = np.float32(bias or 0.0)
        ss = _numvals(ins.srcs[k]).reshape(col) if a['scale_ap'] else np.float32(simm)
        r = N.ACT[fn][0]((x * ss + bb).astype(np.float32))
        store_values(ins.dst, r)
        if reduce_op is not None:
            store_values(ins.srcs[a['res_idx']], N.reduce(a['reduce'], r,
                                                          tuple(range(1, r.ndim))))
    return out


def tensor_copy(src, dtype=None, mask=None, engine=None, api='nisa.tensor_copy'):
    tr = record.cur(api)
    loc = here()
    if isinstance(src, Tensor) and src.buf.kind == 'hbm':
        return load(src, mask=mask, dtype=dtype, api=api)
    xv = operand(src, api)
    odt = D.as_dtype(dtype) or src.dtype
    b, out, dv = _new(tr, api, loc, space_of(xv), odt)
    eng = engine_of(engine, api, (DVE, ACT, POOL))
    ins = _finish(tr, api, loc, 'copy', eng, out, dv, (src,), (xv,), {'api': api}, mask)
    if ins is None:
        return out
    _producer(b, ins)
    if tr.numerics:
        store_values(ins.dst, npview(ins.srcs[0]))
    return out


def copy_into(dv, sv, loc, tr, api, eng=None):
    """An engine copy between two on-chip views (the compiler's own copies)."""
    ins = tr.add('copy', eng, loc, dv, (sv,), {'api': api})
    if tr.numerics:
        store_values(dv, npview(sv))
    return ins


def memset(shape, value, dtype, mask=None, engine=None, api='nisa.memset', buffer='sbuf'):
    tr = record.cur(api)
    loc = here()
    odt = D.as_dtype(dtype) or D.float32
    eng = engine_of(engine, api, (DVE, ACT, POOL))
    b, out, dv = _new(tr, api, loc, tuple(shape), odt, buffer)
    ins = _finish(tr, api, loc, 'memset', eng, out, dv, (), (), {'value': float(value),
                                                                'api': api}, mask)
    if ins is not None:
        _producer(b, ins)
        if tr.numerics:
            store_values(ins.dst, np.float32(value))
    return out


def memset_view(v, value, loc, tr, api, eng=None):
    ins = tr.add('memset', eng, loc, v, (), {'value': float(value), 'api': api})
    if tr.numerics:
        store_values(v, np.float32(value))
    return ins


def iota(expr, dtype, mask=None, api='nisa.iota'):
    tr = record.cur(api)
    loc = here()
    from .index import IndexExpr
    if not isinstance(expr, IndexExpr):
        raise errors.located('iota takes an index expression (nl.arange / nl.mgrid)', api, 2)
    shape = expr.shape
    if len(shape) == 1:
        shape = (1, shape[0])
    odt = D.as_dtype(dtype) or D.int32
    b, out, dv = _new(tr, api, loc, shape, odt)
    ins = _finish(tr, api, loc, 'iota', POOL, out, dv, (), (),
                  {'const': expr.const, 'terms': expr.terms, 'rank': expr.rank, 'api': api},
                  mask)
    if ins is not None:
        _producer(b, ins)
        if tr.numerics:
            vals = np.full(shape, expr.const, dtype=np.float64)
            for p, n, c in expr.terms:
                s = [1] * len(shape)
                s[len(shape) + p] = n
                vals = vals + c * np.arange(n).reshape(s)
            store_values(ins.dst, vals)
    return out


# --- Tensor engine -------------------------------------------------------------------------

def nc_matmul(stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, mask=None, api='nisa.nc_matmul', dst=None, accumulate=None,
              tile_position=None, tile_size=None, perf_mode=None, **kw):
    tr = record.CUR or record.cur(api)
    loc = here()
    sv = operand(stationary, api)
    mv = operand(moving, api)
    if sv[0].kind != 'sbuf' or mv[0].kind != 'sbuf':
        raise errors.located('matmul operands must be in SBUF', api, 2)
    sa, ma = sv[3], mv[3]
    K, M = sa[0][1], sa[1][1] if len(sa) == 2 else free_elems(sv)
    K2, Nn = ma[0][1], ma[1][1] if len(ma) == 2 else free_elems(mv)
    if K != K2:
        raise errors.located('contraction (partition) sizes differ: stationary %d, moving %d'
                             % (K, K2), api, 2)
    if M > 128:
        raise errors.located('stationary free size %d > 128' % M, api, 2)
    if Nn > 512:
        raise errors.located('moving free size %d > 512' % Nn, api, 2)
    if mask is not None:
        raise errors.located('masks on nc_matmul are not supported', api, 2)
    a = {'acc': False, 'tr': bool(is_transpose), 'api': api}
    if dst is None:
        b, out = result(tr, loc, (M, Nn), D.float32, 'psum')
        dv = (b, 0, 0, out.axes)
    else:
        out = dst
        dv = operand(dst, api)
        if dv[0].kind != 'psum':
            raise errors.located('the destination of nc_matmul must be in PSUM', api, 2)
        if npart(dv) != M or free_elems(dv) != Nn:
            raise errors.located('destination of shape %s for a %dx%d result'
                                 % (space_of(dv), M, Nn), api, 2)
        a['acc'] = _acc_flag(tr, dv, accumulate)
    ins = tr.add('mm', PE, loc, dv, (sv, mv), a)
    if dst is None:
        b.prod = ins
    tr.busy[PE] += (Nn if Nn > 64 else 64) / 2.4
    if tr.numerics:
        s = npview(sv).reshape(K, M).astype(np.float32)
        m = npview(mv).reshape(K, Nn).astype(np.float32)
        r = s.T @ m
        if a['acc']:
            r = r + npview(dv).reshape(M, Nn)
        store_values(dv, r)
    return out


def _acc_flag(tr, dv, accumulate):
    """Whether a matmul into PSUM view dv accumulates: explicit, else the first write to a
    location (since its nl.zeros or lazy zeros) overwrites and later ones accumulate."""
    buf, blk, off = dv[0], dv[1], dv[2]
    key = (blk, off)
    if buf.mm_written is None:
        buf.mm_written = set()
        p = buf.prod          # a matmul's own result (r = nc_matmul(...)): written by it
        if p is not None and p.op == 'mm' and p.dst is not None and p.dst[0] is buf:
            buf.mm_written.add((p.dst[1], p.dst[2]))
    if accumulate is not None:
        buf.mm_written.add(key)
        return bool(accumulate)
    z = buf.zeros.get(blk) if buf.zeros else None
    if z is not None and not isinstance(z, str):
        if _foldable(tr, z, buf, blk):
            z.op = 'dead'
            buf.zeros[blk] = 'folded'
            z = 'folded'
        else:
            buf.zeros[blk] = None
            z = None
    first = key not in buf.mm_written
    buf.mm_written.add(key)
    if z in ('folded', 'lazy'):
        return not first
    if z is None and buf.zeros is not None and blk in buf.zeros:
        return True               # zeroed by an instruction that stays: accumulate
    return not first


def _foldable(tr, z, buf, blk):
    """A pending nl.zeros memset folds into the first matmul when nothing touched the tile
    since (checked over the last 256 instructions)."""
    ins = tr.ins
    n = len(ins)
    for k in range(n - 1, max(-1, n - 257), -1):
        i = ins[k]
        if i is z:
            return True
        d = i.dst
        if d is not None and d[0] is buf and d[1] == blk:
            return False
        for s in i.srcs:
            if s is not None and s[0] is buf and s[1] == blk:
                return False
    return False


def nc_transpose(data, engine=None, mask=None, api='nisa.nc_transpose'):
    tr = record.cur(api)
    loc = here()
    xv = operand(data, api)
    P, F = npart(xv), free_elems(xv)
    eng = engine_of(engine, api, (PE, DVE))
    if eng is None:
        eng = PE
    if eng == DVE:
        if P > 32 or F > 32:
            raise errors.located('a Vector-engine transpose takes at most 32x32', api, 2)
        b, out, dv = _new(tr, api, loc, (F, P), data.dtype)
        ins = tr.add('dve_t', DVE, loc, dv, (xv,), {'api': api})
    else:
        if P > 128 or F > 128:
            raise errors.located('a Tensor-engine transpose takes at most 128x128', api, 2)
        iv = identity(tr, data.dtype, P, loc)
        b, out, dv = _new(tr, api, loc, (F, P), D.float32, 'psum')
        ins = tr.add('mm', PE, loc, dv, (xv, iv), {'acc': False, 'tr': True, 'ident': True,
                                                   'api': api})
        tr.busy[PE] += max(P, 64) / _CLK.get(tr.target, _CLK['trn2'])[PE]
    _producer(b, ins)
    if tr.numerics:
        store_values(dv, npview(xv).reshape(P, F).T)
    return out


# --- assignment and accumulation --------------------------------------------------------

def identity(tr, dtype, P, loc):
    """The identity a Tensor-engine transpose multiplies with: a constant the compiler
    adds to HBM, loaded to SBUF once (2-byte types share a bf16 one)."""
    dt = D.float32 if dtype.size == 4 else D.bfloat16
    key = ('identity', dt.name)
    sb = tr.consts.get(key)
    if sb is None:
        hb = Buf((128, 128), dt, 'hbm', ('<identity>', 0), 'identity', 'const')
        hb.id = len(tr.bufs)
        tr.bufs.append(hb)
        hb.data = np.eye(128, dtype=np.float32).reshape(1, -1)
        sb = new_temp((128, 128), dt, 'sbuf', loc, 'identity')
        v = (sb, 0, 0, sb.tile_axes())
        tr.add('dma', None, loc, v, ((hb, 0, 0, hb.tile_axes()),), {'kind': 'load',
                                                                  'api': 'nc_transpose'})
        if tr.numerics:
            store_values(v, np.eye(128, dtype=np.float32))
        tr.consts[key] = sb
    return (sb, 0, 0, ((128, P), (1, P)))


def _is_whole_temp(t):
    b = t.buf
    return b.temp and t.blk == 0 and t.off == 0 and t.axes == b.tile_axes()


def assign(w, value):
    """t[...] = value: retarget value's producing instruction to write t, or copy."""
    api = 'assignment'
    tr = record.CUR or record.cur(api)
    if value.__class__ is Tensor:
        pass
    elif isinstance(value, _LoopReduce):
        return value.finish(w)
    elif isinstance(value, (int, float, np.number)):
        wv = operand(w, api, onchip=False)
        if w.buf.kind == 'hbm':
            raise errors.located('cannot assign a number to an HBM tensor', api, 2)
        ins = memset_view(wv, value, here(), tr, api)
        return ins
    elif not isinstance(value, Tensor):
        raise errors.located('cannot assign %s to an NKI tensor' % type(value).__name__, api, 2)
    wv = operand(w, api, onchip=False)
    vb = value.buf
    if vb is w.buf and value.blk == w.blk and value.off == w.off and value.axes == w.axes:
        return None
    if w.oob is not None:
        recheck(w, None, api)
    prod = vb.prod if vb.temp else None
    if (prod is not None and value.blk == 0 and value.off == 0 and value.axes == vb.taxes and
            not vb.nread and prod.dst is not None and prod.dst[0] is vb and prod.op != 'dead'
            and _retarget_ok(prod, w.buf)):
        ws, ps = space_of(wv), space_of(prod.dst)
        if not same_shape(ws, ps) and not same_shape(ws, space_of(value.view())):
            raise errors.located('assigning a tile of shape %s to a view of shape %s'
                                 % (space_of(value.view()), ws), api, 2)
        clips = prod.a.get('clips') if prod.a else None
        nv = clip(wv, clips, space_of(wv)) if clips else wv
        old = prod.dst
        if prod.op == 'mm':
            prod.dst = None
            prod.a['acc'] = _acc_flag(tr, nv, None)
        prod.dst = nv
        if prod.op == 'mm':
            if prod.a['acc'] and tr.numerics:
                store_values(nv, npview(nv) + npview(old).reshape(npview(nv).shape))
            elif tr.numerics:
                store_values(nv, npview(old))
        elif tr.numerics:
            store_values(nv, npview(old))
        value.buf, value.blk, value.off, value.axes = w.buf, w.blk, wv[2], wv[3]
        return prod
    sv = operand(value, api, onchip=False)
    loc = here()
    if not same_shape(space_of(wv), space_of(sv)):
        raise errors.located('assigning a tile of shape %s to a view of shape %s'
                             % (space_of(sv), space_of(wv)), api, 2)
    if w.buf.kind == 'hbm' or vb.kind == 'hbm':
        return dma_copy(w, value, api=api)
    return copy_into(wv, sv, loc, tr, api)


def _retarget_ok(prod, wbuf):
    if prod.op == 'dma':
        return wbuf.kind != 'hbm' or prod.a.get('kind') != 'load'
    if wbuf.kind == 'hbm':
        return False
    if prod.op == 'mm':
        return wbuf.kind == 'psum'
    return True


def accumulate(t, o, alu, api):
    """t += o: PSUM += matmul folds into the matmul; otherwise t = t (alu) o in place."""
    tr = record.CUR or record.cur(api)
    ob = o.buf if o.__class__ is Tensor else None
    if alu == 'add' and ob is not None and ob.temp and t.buf.kind == 'psum':
        prod = ob.prod
        if (prod is not None and prod.op == 'mm' and not ob.nread and o.blk == 0 and
                o.off == 0 and o.axes == ob.taxes and not prod.a.get('ident')):
            tv = operand(t, api)
            if tv[3] != prod.dst[3] and (npart(tv) != npart(prod.dst) or
                                         free_elems(tv) != free_elems(prod.dst)):
                raise errors.located('accumulating a %s matmul result into a %s view'
                                     % (space_of(prod.dst), space_of(tv)), api, 2)
            old = prod.dst
            prod.dst = None
            prod.a['acc'] = _acc_flag(tr, tv, None)
            prod.dst = tv
            if tr.numerics:
                add = npview(old).reshape(npview(tv).shape)
                store_values(tv, (npview(tv) + add) if prod.a['acc'] else add)
            o.buf, o.blk, o.off, o.axes = t.buf, t.blk, tv[2], tv[3]
            return t
    if isinstance(o, Tensor):
        r = tensor_tensor(t, o, alu, dtype=t.dtype, api=api)
    else:
        r = tensor_scalar(t, alu, o, dtype=t.dtype, api=api)
    assign(t, r)
    return t


def binop(name, x, y, api, dtype=None, mask=None):
    """x (op) y for tiles and numbers (Python operators and nl.add & co)."""
    xt, yt = isinstance(x, Tensor), isinstance(y, Tensor)
    if xt and yt:
        return tensor_tensor(x, y, name, dtype=dtype, mask=mask, api=api)
    if xt:
        if name == 'divide' and isinstance(y, (int, float)):
            return tensor_scalar(x, 'multiply', 1.0 / float(y), dtype=dtype, mask=mask, api=api)
        return tensor_scalar(x, name, y, dtype=dtype, mask=mask, api=api)
    if yt:
        return tensor_scalar(y, name, x, reverse0=True, dtype=dtype, mask=mask, api=api)
    return N.alu(name, np.float32(x), np.float32(y))


def broadcast_to(t, shape):
    """t.broadcast_to(shape): free dims of size 1 broadcast by a zero stride (no work);
    broadcasting one partition to P is a Tensor-engine matmul with a ones vector."""
    api = 'broadcast_to'
    tr = record.cur(api)
    loc = here()
    v = operand(t, api)
    sh = space_of(v)
    shape = tuple(int(s) for s in shape)
    if len(shape) != len(sh):
        raise errors.located('broadcast_to %s from shape %s' % (shape, sh), api, 2)
    axes = list(v[3])
    for i in range(1, len(sh)):
        if sh[i] != shape[i]:
            if sh[i] != 1:
                raise errors.located('cannot broadcast dim %d of size %d to %d'
                                     % (i, sh[i], shape[i]), api, 2)
            axes[i] = (0, shape[i])
    if sh[0] == shape[0]:
        return Tensor(v[0], v[1], v[2], tuple(axes))
    if sh[0] != 1:
        raise errors.located('cannot broadcast %d partitions to %d' % (sh[0], shape[0]), api, 2)
    if any(s == 0 for s, _ in axes[1:]):
        raise errors.located('broadcasting a view across partitions and free dims at once is '
                             'not supported: broadcast the partitions first', api, 2)
    F = free_elems(v)
    P = shape[0]
    # a matmul against a ones vector per 512 elements into PSUM, each copied to SBUF
    ones_b, ones, ov = _new(tr, api, loc, (1, P), D.bfloat16)
    memset_view(ov, 1.0, loc, tr, api, DVE)
    b, out, dv = _new(tr, api, loc, (P,) + tuple(shape[1:]), t.dtype)
    done = 0
    flat = v[3][-1][0] == 1 and all(a[0] == a2[0] * a2[1] for a, a2 in zip(v[3][1:-1], v[3][2:]))
    if not flat:
        raise errors.located('partition broadcast of a non-contiguous view', api, 2)
    while done < F:
        n = min(512, F - done)
        pb = new_temp((P, n), D.float32, 'psum', loc)
        pv = (pb, 0, 0, pb.taxes)
        mv = (v[0], v[1], v[2] + done, ((v[3][0][0], 1), (1, n)))
        tr.add('mm', PE, loc, pv, (ov, mv), {'acc': False, 'tr': False, 'api': api})
        tr.add('copy', None, loc, (b, 0, done, ((b.F, P), (1, n))), (pv,), {'api': api})
        done += n
    if tr.numerics:
        store_values(dv, np.broadcast_to(npview(v).reshape(1, F), (P, F)))
    return out


class _LoopReduce:
    """nl.loop_reduce(x, op, loop_indices): accumulates x into the assignment target over
    the iterations of the given loops (a copy on the first, `op` on the others)."""

    def __init__(self, x, op, first, dtype, mask, api):
        self.x, self.op, self.first, self.dtype, self.mask, self.api = x, op, first, dtype, mask, api

    def finish(self, w):
        tr = record.cur(self.api)
        if self.first:
            r = tensor_copy(self.x, dtype=self.dtype or w.dtype, mask=self.mask, api=self.api)
        else:
            r = tensor_tensor(w, self.x, self.op, dtype=self.dtype or w.dtype, mask=self.mask,
                              api=self.api)
        assign(w, r)
        return tr


def loop_reduce(x, op, loop_indices, dtype=None, mask=None, api='nl.loop_reduce'):
    name = alu_name(op, api)
    idx = loop_indices if isinstance(loop_indices, (list, tuple)) else [loop_indices]
    first = all(int(i) == 0 for i in idx)
    return _LoopReduce(x, name, first, D.as_dtype(dtype), mask, api)


from . import tensor as _tensor_module  # noqa: E402 (the operators on tiles call this module)
_tensor_module.ops = sys.modules[__name__]
