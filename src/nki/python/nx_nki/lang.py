"""lang.py: nki.language (`nl`), both generations: tensors and buffers, index grids and
loops, loads and stores, and the value-returning math functions (each one instruction,
ops.py). neuronxcc.nki.language and nki.language re-export this module.
"""
import numpy as np

from . import dtypes as D
from . import errors
from . import index as _ix
from . import ops
from . import record
from .dtypes import (bfloat16, float16, float32, tfloat32, float8_e4m3, float8_e5m2, int8,
                     int16, int32, uint8, uint16, uint32, bool_)
from .ops import OpFn
from .tensor import Tensor, Buf, ParDim, whole, ds, NUM_PARTITIONS

float8_e4m3fn = float8_e4m3


class Buffer:
    __slots__ = ('kind', 'name')

    def __init__(self, kind, name):
        self.kind = kind
        self.name = name

    def __repr__(self):
        return 'nl.' + self.name

    def __call__(self, *a, **k):       # nl.sbuf.view(...) style calls are not modelled
        return self


sbuf = Buffer('sbuf', 'sbuf')
psum = Buffer('psum', 'psum')
hbm = Buffer('hbm', 'hbm')
shared_hbm = Buffer('hbm', 'shared_hbm')
private_hbm = Buffer('hbm', 'private_hbm')


def _buffer(b, api):
    if b is None:
        return sbuf
    if isinstance(b, Buffer):
        return b
    if isinstance(b, str) and b in ('sbuf', 'psum', 'hbm', 'shared_hbm', 'private_hbm'):
        return globals()[b]
    raise errors.located('unknown buffer %r' % (b,), api, 3)


class _TileSize:
    pmax = 128
    psum_fmax = 512
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_min_align = 4
    sbuf_min_align = 1
    total_available_sbuf_size = 192 * 1024


tile_size = _TileSize()


def par_dim(n):
    return ParDim(int(n))


def _declare(shape, dtype, buffer, name, api, role=None):
    tr = record.CUR or record.cur(api)
    loc = record.here(3)
    d = dtype if dtype.__class__ is D.DType else D.as_dtype(dtype)
    if d is None:
        raise errors.located('dtype= is required', api, 3)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    buf = buffer if buffer.__class__ is Buffer else _buffer(buffer, api)
    kind = buf.kind
    if buf is shared_hbm and tr.spmd_rank:
        # SPMD instances after the first share the outputs the first one declared
        key = (loc, tuple(int(s) for s in shape))
        b = tr.consts.get(key)
        if b is not None:
            return whole(b)
    b = Buf(shape, d, kind, loc, name or '', role or ('output' if buf is shared_hbm else
                                                     'internal'))
    if kind != 'hbm' and b.P > NUM_PARTITIONS:
        raise errors.located('%d partitions in shape %s: a tile has at most %d (mark another '
                             'dim with nl.par_dim, or split the tensor)'
                             % (b.P, b.shape, NUM_PARTITIONS), api, 3)
    b.id = len(tr.bufs)
    tr.bufs.append(b)
    if buf is shared_hbm:
        tr.consts[(loc, b.shape)] = b
    return whole(b)


def ndarray(shape, dtype, buffer=None, name='', address=None, **kw):
    t = _declare(shape, dtype, buffer, name, 'nl.ndarray')
    return t


def empty_like(t, dtype=None, buffer=None, name='', **kw):
    return _declare(t.shape, dtype or t.dtype, buffer or _kind_buffer(t), name, 'nl.empty_like')


def _kind_buffer(t):
    return {'hbm': hbm, 'sbuf': sbuf, 'psum': psum}[t.buf.kind]


def _fill(shape, value, dtype, buffer, name, lazy, api):
    t = _declare(shape, dtype, buffer, name, api)
    tr = record.CUR
    b = t.buf
    if b.kind == 'hbm':
        raise errors.located('%s in HBM is not supported (fill an on-chip tile and store it)'
                             % api, api, 2)
    loc = record.here(3)
    for blk in range(b.nblk):
        v = (b, blk, 0, b.tile_axes())
        if lazy and b.kind == 'psum' and value == 0:
            b.zeros[blk] = 'lazy'
            if tr.numerics:
                ops.store_values(v, np.float32(0))
            continue
        ins = ops.memset_view(v, value, loc, tr, api)
        if b.kind == 'psum' and value == 0:
            b.zeros[blk] = ins
    return t


def zeros(shape, dtype, buffer=None, name='', lazy_initialization=False, **kw):
    return _fill(shape, 0.0, dtype, buffer, name, lazy_initialization, 'nl.zeros')


def ones(shape, dtype, buffer=None, name='', **kw):
    return _fill(shape, 1.0, dtype, buffer, name, False, 'nl.ones')


def full(shape, fill_value, dtype, buffer=None, name='', **kw):
    return _fill(shape, float(fill_value), dtype, buffer, name, False, 'nl.full')


def zeros_like(t, dtype=None, buffer=None, name='', **kw):
    return _fill(t.shape, 0.0, dtype or t.dtype, buffer or _kind_buffer(t), name, False,
                 'nl.zeros_like')


def ones_like(t, dtype=None, buffer=None, name='', **kw):
    return _fill(t.shape, 1.0, dtype or t.dtype, buffer or _kind_buffer(t), name, False,
                 'nl.ones_like')


def full_like(t, fill_value, dtype=None, buffer=None, name='', **kw):
    return _fill(t.shape, float(fill_value), dtype or t.dtype, buffer or _kind_buffer(t), name,
                 False, 'nl.full_like')


def shared_constant(constant, dtype=None, **kw):
    """An HBM tensor holding a constant the kernel was given (e.g. an identity)."""
    api = 'nl.shared_constant'
    tr = record.cur(api)
    arr = np.asarray(constant)
    d = D.as_dtype(dtype) or D.as_dtype(arr.dtype)
    key = ('const', arr.shape, d.name, arr.tobytes()[:64], hash(arr.tobytes()))
    b = tr.consts.get(key)
    if b is None:
        b = Buf(arr.shape, d, 'hbm', record.here(2), '', 'const')
        b.id = len(tr.bufs)
        tr.bufs.append(b)
        b.data = D.cast(arr.reshape(1, -1), d).astype(D.storage(d))
        tr.consts[key] = b
    return whole(b)


# --- grids and loops -------------------------------------------------------------------

arange = _ix.arange
mgrid = _ix.mgrid


def _range(kind):
    def r(start, stop=None, step=1, **kw):
        if stop is None:
            start, stop = 0, start
        return record.loop(range(int(start), int(stop), int(step)), kind)
    r.__name__ = kind
    return r


affine_range = _range('affine_range')
sequential_range = _range('sequential_range')
static_range = _range('static_range')
dynamic_range = _range('dynamic_range')


def program_id(axis=0):
    tr = record.cur('nl.program_id')
    pid = tr.program_id
    if axis >= len(pid):
        return 0
    return pid[axis]


def num_programs(axes=None):
    tr = record.cur('nl.num_programs')
    g = tr.grid or (1,)
    if axes is None:
        n = 1
        for x in g:
            n *= x
        return n
    return g[axes] if axes < len(g) else 1


def program_ndim():
    return len(record.cur('nl.program_ndim').grid)


def spmd_dim(*dims):
    """nl.spmd_dim(n, nl.nc(k)): a grid dim of n x k instances spread over k cores; here
    the instances run one after the other on the one simulated core."""
    n = 1
    for d in dims:
        n *= int(d)
    return n


def nc(n):
    return int(n)


def device_print(prefix, x, **kw):
    tr = record.cur('nl.device_print')
    tr.note(record.here(2), 'nl.device_print is not recorded')


# --- data movement -------------------------------------------------------------------

load = ops.load          # nl.load(src, mask=None, dtype=None): one call, it is the hottest


def store(dst, value, mask=None, **kw):
    return ops.store(dst, value, mask=mask, api='nl.store')


def load_transpose2d(src, mask=None, dtype=None, **kw):
    return ops.load(src, mask=mask, dtype=dtype, api='nl.load_transpose2d', transpose=True)


def copy(x, dtype=None, mask=None, **kw):
    if isinstance(x, Tensor) and x.buf.kind == 'hbm':
        return ops.load(x, mask=mask, dtype=dtype, api='nl.copy')
    return ops.tensor_copy(x, dtype=dtype, mask=mask, engine=kw.get('engine'), api='nl.copy')


# --- math ------------------------------------------------------------------------------

def _act(name):
    api = 'nl.' + name

    def f(x, dtype=None, mask=None, **kw):
        return ops.activation(name, x, dtype=dtype, mask=mask, api=api)
    return OpFn(name, 'act', f, api)


exp = _act('exp')
log = _act('log')
tanh = _act('tanh')
sigmoid = _act('sigmoid')
relu = _act('relu')
gelu = _act('gelu')
gelu_dx = _act('gelu_dx')
gelu_apprx_tanh = _act('gelu_apprx_tanh')
silu = _act('silu')
silu_dx = _act('silu_dx')
sqrt = _act('sqrt')
rsqrt = _act('rsqrt')
square = _act('square')
sin = _act('sin')
cos = _act('cos')
arctan = _act('arctan')
erf = _act('erf')
erf_dx = _act('erf_dx')
softplus = _act('softplus')
mish = _act('mish')
sign = _act('sign')
abs = _act('abs')
identity = _act('identity')


def _reciprocal(x, dtype=None, mask=None, **kw):
    from . import isa
    return isa.reciprocal(x, dtype=dtype, mask=mask)


reciprocal = OpFn('reciprocal', 'act', _reciprocal, 'nl.reciprocal')


def _negative(x, dtype=None, mask=None, **kw):
    return ops.tensor_scalar(x, 'multiply', -1.0, dtype=dtype, mask=mask, api='nl.negative')


negative = OpFn('negative', 'act', _negative, 'nl.negative')


def _bin(name, alu):
    api = 'nl.' + name

    def f(x, y, dtype=None, mask=None, **kw):
        return ops.binop(alu, x, y, api, dtype=D.as_dtype(dtype), mask=mask)
    return OpFn(alu, 'alu', f, api)


add = _bin('add', 'add')
subtract = _bin('subtract', 'subtract')
multiply = _bin('multiply', 'multiply')
divide = _bin('divide', 'divide')
maximum = _bin('maximum', 'max')
minimum = _bin('minimum', 'min')
power = _bin('power', 'power')
equal = _bin('equal', 'equal')
not_equal = _bin('not_equal', 'not_equal')
greater = _bin('greater', 'greater')
greater_equal = _bin('greater_equal', 'greater_equal')
less = _bin('less', 'less')
less_equal = _bin('less_equal', 'less_equal')
logical_and = _bin('logical_and', 'logical_and')
logical_or = _bin('logical_or', 'logical_or')
logical_xor = _bin('logical_xor', 'logical_xor')
bitwise_and = _bin('bitwise_and', 'bitwise_and')
bitwise_or = _bin('bitwise_or', 'bitwise_or')
bitwise_xor = _bin('bitwise_xor', 'bitwise_xor')
left_shift = _bin('left_shift', 'left_shift')
right_shift = _bin('right_shift', 'right_shift')
abs_max = _bin('abs_max', 'abs_max')
fmod = _bin('fmod', 'mod')


def _reduce(name, alu):
    api = 'nl.' + name

    def f(x, axis=None, dtype=None, keepdims=False, mask=None, **kw):
        if alu == 'mean':
            r = ops.tensor_reduce('add', x, axis, keepdims=keepdims, dtype=D.float32
                                  if dtype is None else dtype, mask=mask, api=api)
            n = 1
            sh = x.shape
            ax = ops._norm_axes(axis, len(sh), api)
            for i in ax:
                n *= sh[i]
            return ops.tensor_scalar(r, 'multiply', 1.0 / n, dtype=dtype or x.dtype, mask=mask,
                                     api=api)
        return ops.tensor_reduce(alu, x, axis, keepdims=keepdims, dtype=dtype, mask=mask,
                                 api=api)
    return OpFn(alu if alu != 'mean' else 'add', 'alu', f, api)


sum = _reduce('sum', 'add')
max = _reduce('max', 'max')
min = _reduce('min', 'min')
mean = _reduce('mean', 'mean')
prod = _reduce('prod', 'multiply')
all = _reduce('all', 'logical_and')


def matmul(x, y, transpose_x=False, mask=None, **kw):
    """x @ y into PSUM; without transpose_x the compiler first transposes x on the
    Tensor engine (an inserted nc_transpose + copy)."""
    api = 'nl.matmul'
    if not transpose_x:
        xt = ops.nc_transpose(x, api=api)
        x = ops.tensor_copy(xt, dtype=x.dtype, api=api)
    return ops.nc_matmul(x, y, api=api)


def transpose(x, dtype=None, mask=None, **kw):
    r = ops.nc_transpose(x, api='nl.transpose')
    if dtype is not None:
        r = ops.tensor_copy(r, dtype=dtype, api='nl.transpose')
    return r


def broadcast_to(x, shape):
    return ops.broadcast_to(x, shape)


def loop_reduce(x, op, loop_indices, dtype=None, mask=None, **kw):
    return ops.loop_reduce(x, op, loop_indices, dtype=dtype, mask=mask)


def where(condition, x, y, dtype=None, mask=None, **kw):
    raise errors.located('nl.where is not supported yet', 'nl.where', 2)


def softmax(x, axis=-1, dtype=None, **kw):
    raise errors.located('nl.softmax is not supported yet (write it with nl.max/exp/sum)',
                         'nl.softmax', 2)


def invert(x, dtype=None, mask=None, **kw):
    raise errors.located('nl.invert is not supported yet', 'nl.invert', 2)
