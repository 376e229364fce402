"""tensor.py: buffers (HBM tensors, SBUF/PSUM tiles) and the views a kernel indexes.

A Buf is one declared tensor. On chip it is laid out as NKI lays out tiles: block dims
(those before the partition dim, marked with nl.par_dim or the first dim), then one
partition dim (at most 128) and the free dims; each block index is one tile of P
partitions x F elements that the compiler allocates on its own. In HBM it is a row-major
array.

A Tensor is what the kernel holds: a whole buffer or a view of it. A resolved view is
(buf, blk, off, axes): tile index, element offset inside the tile (row-major P x F for on
chip, flat for HBM) and ((stride, size), ...) per axis; axis 0 of an on-chip view is the
partition axis (stride F). Indexing supports ints, slices, nl.ds, `...` and legacy index
grids (index.py); out-of-bounds indexes are errors unless a mask later clips them.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import dtypes as D
from . import errors
from . import record
from .index import IndexExpr

NUM_PARTITIONS = 128

# ops.py, set by ops.py when it loads (it imports this module, so this one cannot import it;
# an import statement inside the operator methods would cost every `+` and `+=` a lookup)
ops = None


class ParDim(int):
    """nl.par_dim(n): marks the partition dim of an on-chip shape."""


class Buf:
    """One declared tensor (fields that rarely differ from the class defaults are set only
    when they do: thousands of these are made per second while recording)."""
    id = 0
    name = ''
    role = 'internal'
    data = None
    temp = False
    zeros = None          # psum: {blk: Ins or 'lazy'/'folded'} of nl.zeros
    mm_written = None     # psum: {(blk, off)} written by a matmul
    prod = None           # a temp's producing instruction (see ops.assign)
    nread = 0             # a temp's reads so far
    pdim = 0
    bshape = ()
    nblk = 1

    def __init__(self, shape, dtype, kind, site, name='', role='internal'):
        self.kind = kind
        self.dtype = dtype
        self.site = site
        if name:
            self.name = name
        if role != 'internal':
            self.role = role
        shape, self.P, self.fshape, self.F, self.taxes, pd, bshape, nblk = _layout(shape, kind)
        self.shape = shape
        if pd:
            self.pdim = pd
            self.bshape = bshape
            self.nblk = nblk
        if kind == 'psum':
            self.zeros = {}
            self.mm_written = set()

    @classmethod
    def tile(cls, P, fshape, F, dtype, kind, site):
        """A one-tile on-chip buffer of P partitions (the fast path for op results)."""
        b = cls.__new__(cls)
        b.kind = kind
        b.dtype = dtype
        b.shape = (P,) + fshape
        b.site = site
        b.P = P
        b.fshape = fshape
        b.F = F
        b.taxes = ((F, P),) + _rowmajor(fshape)
        if kind == 'psum':
            b.zeros = {}
            b.mm_written = set()
        return b

    @property
    def onchip(self):
        return self.kind != 'hbm'

    def tile_axes(self):
        """Axes of one whole tile (or of the whole HBM tensor)."""
        return self.taxes

    def row(self, blk):
        """The numerics storage of tile blk (flat), created on first use."""
        d = self.data
        if d is None:
            d = self.data = np.zeros((self.nblk, self.P * self.F if self.kind != 'hbm' else
                                      self.F), dtype=D.storage(self.dtype))
        return d[blk]

    def describe(self):
        return "%s tensor '%s' %s %s" % (self.kind.upper(), self.name or '?',
                                         'x'.join(map(str, self.shape)), self.dtype.name)


_LAYOUTS = {}


def _layout(shape, kind):
    """(shape, P, free shape, F, tile axes, partition dim, block shape, blocks) of a
    declared shape, made once per shape (the declarations in a loop repeat theirs)."""
    pd = 0
    if kind != 'hbm':
        for i, x in enumerate(shape):
            if isinstance(x, ParDim):
                pd = i
                break
    try:
        key = (tuple(shape), pd, kind == 'hbm')
        r = _LAYOUTS.get(key)
    except TypeError:                   # not hashable: made each time (and refused below)
        key = r = None
    if r is None:
        r = _layout1(shape, kind, pd)
        if key is not None:
            _LAYOUTS[key] = r
    return r


def _layout1(shape, kind, pd):
    shape = tuple(int(s) for s in shape)
    if kind == 'hbm':
        n = 1
        for x in shape:
            n *= x
        return (shape, shape[0] if shape else 1, shape[1:], n, _rowmajor(shape), 0, (), 1)
    bshape = shape[:pd]
    nb = 1
    for x in bshape:
        nb *= x
    P = shape[pd] if len(shape) > pd else 1
    fs = shape[pd + 1:]
    f = 1
    for x in fs:
        f *= x
    return (shape, P, fs, f, ((f, P),) + _rowmajor(fs), pd, bshape, nb)


_RM = {}


def _rowmajor(shape):
    r = _RM.get(shape)
    if r is not None:
        return r
    r = _RM[shape] = _rowmajor1(shape)
    return r


def _rowmajor1(shape):
    out = []
    s = 1
    for n in reversed(shape):
        out.append((s, n))
        s *= n
    return tuple(reversed(out))


class Tensor:
    """A kernel's handle on a buffer or a view of one."""
    __slots__ = ('buf', 'blk', 'off', 'axes', 'bpre', 'oob', '__weakref__')

    def __init__(self, buf, blk, off, axes, bpre=None, oob=None):
        self.buf = buf
        self.blk = blk            # None: a whole on-chip buffer with block dims
        self.off = off
        self.axes = axes
        self.bpre = bpre          # block indices taken so far (partial block selection)
        self.oob = oob            # pending bounds problem: (dims info) or None

    # --- what the kernel sees ---------------------------------------------------
    @property
    def shape(self):
        if self.blk is None:
            nb = len(self.bpre or ())
            return self.buf.shape[nb:]
        return tuple(n for _, n in self.axes)

    @property
    def dtype(self):
        return self.buf.dtype

    @property
    def buffer(self):
        from . import lang
        return {'hbm': lang.hbm, 'sbuf': lang.sbuf, 'psum': lang.psum}[self.buf.kind] \
            if self.buf.role != 'output' else lang.shared_hbm

    @property
    def name(self):
        return self.buf.name

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return self.buf.dtype.size

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return 'Tensor(%s, shape=%s, dtype=%s)' % (self.buf.kind, self.shape, self.buf.dtype.name)

    __hash__ = object.__hash__

    def view(self, api='indexing'):
        """(buf, blk, off, axes) of a single tile; errors for multi-tile handles."""
        if self.blk is None:
            raise errors.located('%s has block dims %s: index them to pick one tile'
                                 % (self.buf.describe(), self.buf.bshape), api, 3)
        return (self.buf, self.blk, self.off, self.axes)

    # --- indexing -----------------------------------------------------------------
    def __getitem__(self, key):
        return index(self, key, self)

    def __setitem__(self, key, value):
        if key is Ellipsis and self.blk is not None:       # t[...] = ...: the view itself
            w = Tensor(self.buf, self.blk, self.off, self.axes)
        else:
            w = index(self, key, "assignment to '%s'" % (self.buf.name or '?'))
        ops.assign(w, value)

    def reshape(self, shape, *more):
        if more:
            shape = (shape,) + more
        return reshape(self, tuple(int(s) for s in shape))

    def ap(self, pattern, offset=0, **kw):
        """Beta 2 t.ap([[stride, size], ...], offset): an explicit access pattern; the
        first pair's stride is the partition step (NKI: the per-partition size)."""
        pat = tuple((int(s), int(n)) for s, n in pattern)
        b = self.buf
        base = self if self.blk is not None else Tensor(b, 0, 0, b.tile_axes())
        if b.onchip:
            p0 = pat[0]
            axes = ((b.F, p0[1]),) + pat[1:]
        else:
            axes = pat
        t = Tensor(b, base.blk, base.off + int(offset), axes)
        check_bounds(t, 'ap')
        return t

    def broadcast_to(self, shape):
        return ops.broadcast_to(self, shape)

    def __iter__(self):
        raise TypeError('an NKI tensor is not iterable')

    # operators: nl.* functions on tiles (ops.py)
    def __add__(self, o):
        return ops.binop('add', self, o, 'operator +')

    def __radd__(self, o):
        return ops.binop('add', o, self, 'operator +')

    def __sub__(self, o):
        return ops.binop('subtract', self, o, 'operator -')

    def __rsub__(self, o):
        return ops.binop('subtract', o, self, 'operator -')

    def __mul__(self, o):
        return ops.binop('multiply', self, o, 'operator *')

    def __rmul__(self, o):
        return ops.binop('multiply', o, self, 'operator *')

    def __truediv__(self, o):
        return ops.binop('divide', self, o, 'operator /')

    def __rtruediv__(self, o):
        return ops.binop('divide', o, self, 'operator /')

    def __pow__(self, o):
        return ops.binop('power', self, o, 'operator **')

    def __neg__(self):
        return ops.binop('multiply', self, -1.0, 'operator -')

    def __iadd__(self, o):
        return ops.accumulate(self, o, 'add', 'operator +=')

    def __isub__(self, o):
        return ops.accumulate(self, o, 'subtract', 'operator -=')

    def __imul__(self, o):
        return ops.accumulate(self, o, 'multiply', 'operator *=')

    def __lt__(self, o):
        return ops.binop('less', self, o, 'operator <')

    def __le__(self, o):
        return ops.binop('less_equal', self, o, 'operator <=')

    def __gt__(self, o):
        return ops.binop('greater', self, o, 'operator >')

    def __ge__(self, o):
        return ops.binop('greater_equal', self, o, 'operator >=')

    def __and__(self, o):
        return ops.binop('bitwise_and', self, o, 'operator &')

    def __or__(self, o):
        return ops.binop('bitwise_or', self, o, 'operator |')


def whole(buf):
    if buf.kind != 'hbm' and buf.nblk > 1 or buf.bshape:
        return Tensor(buf, None, 0, None, ())
    return Tensor(buf, 0, 0, buf.tile_axes())


# --- indexing ----------------------------------------------------------------------

class _Ds:
    """nl.ds(start, size): a slice of `size` elements from `start`."""
    __slots__ = ('start', 'size', 'step')

    def __init__(self, start, size, step=1):
        self.start = start
        self.size = size
        self.step = step


def ds(start, size, step=1):
    return _Ds(start, size, step)


def _as_int(x):
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, IndexExpr) and not x.terms:
        return x.const
    return None


_FULL = slice(None)


def index(t, key, api):
    buf = t.buf
    if key.__class__ is tuple:
        axes = t.axes
        if t.blk is not None and len(key) == len(axes):
            r = _index_simple(buf, t.blk, t.off, axes, key)
            if r is not None:
                if buf.kind != 'hbm':
                    _check_onchip(r, api)
                return r
    elif key is Ellipsis or key == _FULL:
        if t.blk is not None:
            return Tensor(buf, t.blk, t.off, t.axes)
        if buf.nblk == 1 and not t.bpre:
            return Tensor(buf, 0, 0, buf.taxes)
    if key.__class__ is not tuple:
        key = (key,)
    if t.blk is None:
        # consume block indices first
        pre = t.bpre or ()
        nb = len(buf.bshape)
        need = nb - len(pre)
        take = []
        rest = list(key)
        while rest and len(take) < need:
            k = rest[0]
            if k is Ellipsis:
                break
            v = _as_int(k)
            if v is None:
                if isinstance(k, slice) and buf.bshape[len(pre) + len(take)] == 1:
                    v = 0
                else:
                    raise errors.located('block dim %d of %s takes an integer index (a loop '
                                         'variable), not %r' % (len(pre) + len(take),
                                                                buf.describe(), k), api, 3)
            n = buf.bshape[len(pre) + len(take)]
            if v < 0 or v >= n:
                raise errors.located('index %d is out of bounds for block dim %d (size %d) '
                                     'of %s' % (v, len(pre) + len(take), n, buf.describe()),
                                     api, 3)
            take.append(v)
            rest.pop(0)
        pre = pre + tuple(take)
        if len(pre) < nb:
            if rest and rest[0] is not Ellipsis:
                raise errors.located('too few block indices for %s' % buf.describe(), api, 3)
            return Tensor(buf, None, 0, None, pre)
        blk = 0
        for v, n in zip(pre, buf.bshape):
            blk = blk * n + v
        key = tuple(rest)
        off = 0
        dims = buf.tile_axes()
    else:
        blk = t.blk
        off = t.off
        dims = t.axes
    return _index_dims(t, buf, blk, off, dims, key, api)


# the axes of indexed views, one tuple of each kept: a loop's views repeat the same few
# (their records keep them until the kernel is compiled)
_AXES = {}


def _index_simple(buf, blk, off, dims, key):
    """The view of one tile indexed by ints, plain slices and nl.ds, one per dim, all in
    bounds (the common case, kept cheap); None for anything else, which _index_dims
    handles (and reports)."""
    onchip = buf.kind != 'hbm'
    axes = []
    d = 0
    for k in key:
        stride, n = dims[d]
        c = k.__class__
        if c is slice:
            if k.step is not None:
                return None
            a = k.start
            b = k.stop
            if a is None:
                if b is None:
                    axes.append((stride, n))
                    d += 1
                    continue
                a = 0
            elif a.__class__ is not int:
                return None
            if b is None:
                b = n
            elif b.__class__ is not int:
                return None
            if a < 0 or b > n or a >= b:
                return None
            off += a * stride
            axes.append((stride, b - a))
        elif c is int:
            if k < 0 or k >= n:
                return None
            off += k * stride
            if onchip and d == 0:
                axes.append((stride, 1))   # the partition dim stays
        elif c is _Ds:
            a, cnt, step = k.start, k.size, k.step
            if a.__class__ is not int or cnt.__class__ is not int or step.__class__ is not int \
                    or a < 0 or a + (cnt - 1) * step >= n:
                return None
            off += a * stride
            axes.append((stride * step, cnt))
        else:
            return None
        d += 1
    axes = tuple(axes)
    return Tensor(buf, blk, off, _AXES.setdefault(axes, axes))


def _expand(key, ndims, api):
    out = []
    seen = False
    for k in key:
        if k is Ellipsis:
            if seen:
                raise errors.located('more than one ... in an index', api, 4)
            seen = True
            n = ndims - (len(key) - 1)
            out.extend([slice(None)] * max(n, 0))
        else:
            out.append(k)
    if len(out) > ndims:
        raise errors.located('%d indices for %d dimensions' % (len(out), ndims), api, 4)
    out.extend([slice(None)] * (ndims - len(out)))
    return out


def _index_dims(t, buf, blk, off, dims, key, api):
    if len(key) == len(dims) and Ellipsis not in key:
        items = key
    else:
        items = _expand(key, len(dims), api)
    grid = False
    for k in items:
        if k.__class__ is IndexExpr and k.terms:
            grid = True
            break
    onchip = buf.kind != 'hbm'
    if not grid:
        axes = []
        oob = None
        for d, (k, (stride, n)) in enumerate(zip(items, dims)):
            if k.__class__ is slice:
                if k.start is None and k.stop is None and k.step is None:
                    axes.append((stride, n))
                    continue
                step = 1 if k.step is None else int(k.step)
                if step <= 0:
                    raise errors.located('slice steps must be positive', api, 3)
                a = 0 if k.start is None else int(k.start)
                b = n if k.stop is None else int(k.stop)
                if a < 0 or b > n or a >= b:
                    if a < 0 or a >= n or b > n:
                        oob = oob or []
                        oob.append((d, a, b, n))
                    if b <= a:
                        raise errors.located('empty slice %d:%d on dim %d' % (a, b, d), api, 3)
                off += a * stride
                axes.append((stride * step, (b - a + step - 1) // step))
            elif k.__class__ is _Ds:
                a, cnt, step = int(k.start), int(k.size), int(k.step)
                if a < 0 or a + (cnt - 1) * step >= n:
                    oob = oob or []
                    oob.append((d, a, a + (cnt - 1) * step + 1, n))
                off += a * stride
                axes.append((stride * step, cnt))
            else:
                v = _as_int(k)
                if v is None:
                    raise errors.located('cannot index with %r' % (k,), api, 3)
                if v < 0 or v >= n:
                    oob = oob or []
                    oob.append((d, v, v + 1, n))
                off += v * stride
                if onchip and d == 0:
                    axes.append((stride, 1))   # the partition dim stays
        if oob:
            d, a, b, n = oob[0]
            raise errors.located('index %s is out of bounds for dim %d of size %d of %s'
                                 % ('%d:%d' % (a, b) if b != a + 1 else str(a), d, n,
                                    buf.describe()), api, 3)
        axes = tuple(axes)
        res = Tensor(buf, blk, off, _AXES.setdefault(axes, axes))
        if onchip:
            _check_onchip(res, api)
        return res
    # index grids
    rank = 0
    for k in items:
        if isinstance(k, IndexExpr):
            rank = max(rank, k.rank)
    sizes = [1] * rank
    strides = [0] * rank
    info = []
    for d, (k, (stride, n)) in enumerate(zip(items, dims)):
        if k.__class__ is slice:
            if k.start is None and k.stop is None and n == 1:
                info.append((0, (), 1))
                continue
            raise errors.located('mixing slices and index grids (nl.arange/nl.mgrid) in one '
                                 'index is not supported', api, 3)
        if isinstance(k, IndexExpr):
            off += k.const * stride
            for p, sz, c in k.terms:
                pos = rank + p
                if sizes[pos] != 1 and sizes[pos] != sz:
                    raise errors.located('index grids of sizes %d and %d on the same axis'
                                         % (sizes[pos], sz), api, 3)
                sizes[pos] = sz
                strides[pos] += c * stride
            info.append((k.const, tuple((rank + p, sz, c) for p, sz, c in k.terms), n))
        else:
            v = _as_int(k)
            if v is None:
                raise errors.located('cannot index with %r' % (k,), api, 3)
            off += v * stride
            info.append((v, (), n))
    axes = tuple(zip(strides, sizes))
    res = Tensor(buf, blk, off, axes)
    bad = _grid_oob(info, None)
    if bad is not None:
        res.oob = (info, bad)
    elif onchip:
        _check_onchip(res, api)
    return res


def _grid_oob(info, clips):
    """First dim whose index range leaves [0, n) (with the mask's axis clips), or None."""
    for d, (c, terms, n) in enumerate(info):
        lo = hi = c
        for pos, sz, coef in terms:
            a, b = 0, sz
            if clips and pos in clips:
                a, b = max(0, clips[pos][0]), min(sz, clips[pos][1])
                if b <= a:
                    return None
            if coef > 0:
                lo += coef * a
                hi += coef * (b - 1)
            else:
                lo += coef * (b - 1)
                hi += coef * a
        if lo < 0 or hi >= n:
            return (d, lo, hi, n)
    return None


def recheck(t, clips, api):
    """Bounds of a grid-indexed view under a mask's clips (deferred from indexing)."""
    info, bad = t.oob
    bad = _grid_oob(info, clips)
    if bad is not None:
        d, lo, hi, n = bad
        raise errors.located('index range %d..%d is out of bounds for dim %d of size %d of %s'
                             % (lo, hi, d, n, t.buf.describe()), api, 3)


def _check_onchip(t, api):
    """On-chip views: axis 0 walks partitions (<= 128), the others stay in a partition."""
    b = t.buf
    F = b.F
    axes = t.axes
    if not axes:
        raise errors.located('an on-chip view needs a partition axis', api, 4)
    s0, n0 = axes[0]
    row, col = divmod(t.off, F)
    if n0 > 1 and s0 != F:
        raise errors.located('the first index of %s must walk its partitions (got a stride '
                             'of %d elements; the partition stride is %d)'
                             % (b.describe(), s0, F), api, 4)
    if row + n0 > b.P:
        raise errors.located('partitions %d..%d are out of bounds for %s (%d partitions)'
                             % (row, row + n0 - 1, b.describe(), b.P), api, 4)
    end = col
    for s, n in axes[1:]:
        if s < 0:
            raise errors.located('negative free-dim steps are not supported', api, 4)
        end += s * (n - 1)
    if end >= F and F > 0:
        raise errors.located('a free index of %s leaves its partition (element %d of %d)'
                             % (b.describe(), end, F), api, 4)


def check_bounds(t, api):
    b = t.buf
    if b.onchip:
        _check_onchip(t, api)
        return
    end = t.off
    for s, n in t.axes:
        end += s * (n - 1)
    if t.off < 0 or end >= b.F:
        raise errors.located('view elements %d..%d are out of bounds for %s'
                             % (t.off, end, b.describe()), api, 3)


def reshape(t, shape):
    b = t.buf
    n = 1
    for s in shape:
        n *= s
    if t.blk is None:
        raise errors.located('reshape of a multi-tile buffer is not supported', 'reshape', 3)
    cur = 1
    for _, s in t.axes:
        cur *= s
    if n != cur:
        raise errors.located('cannot reshape %s into %s' % (t.shape, shape), 'reshape', 3)
    # contiguous views only
    exp = 1
    for s, cnt in reversed(t.axes if not b.onchip else t.axes[1:]):
        if cnt > 1 and s != exp:
            raise errors.located('reshape of a non-contiguous view is not supported',
                                 'reshape', 3)
        exp *= cnt
    if b.onchip:
        if shape[0] != t.axes[0][1]:
            raise errors.located('reshape must keep the partition dim', 'reshape', 3)
        axes = ((b.F, shape[0]),) + _rowmajor(shape[1:])
    else:
        axes = _rowmajor(shape)
    return Tensor(b, t.blk, t.off, axes)


# --- numerics access -----------------------------------------------------------------

def npview(v):
    """A writable numpy view of view tuple v (storage dtype)."""
    buf, blk, off, axes = v
    row = buf.row(blk)
    it = row.itemsize
    return as_strided(row[off:], shape=tuple(n for _, n in axes),
                      strides=tuple(s * it for s, _ in axes), writeable=True)


def new_temp(shape, dtype, kind, loc, name=''):
    """A buffer for an op's result (a tile the compiler allocates)."""
    P = int(shape[0])
    if kind != 'hbm' and P > NUM_PARTITIONS:
        raise errors.located('a tile of %d partitions (at most %d)' % (P, NUM_PARTITIONS),
                             None, 3)
    fs = tuple(shape[1:])
    F = 1
    for x in fs:
        F *= x
    b = Buf.tile(P, fs, F, dtype, kind, loc)
    if name:
        b.name = name
    b.temp = True
    tr = record.CUR
    if tr is not None:
        b.id = len(tr.bufs)
        tr.bufs.append(b)
    return b
