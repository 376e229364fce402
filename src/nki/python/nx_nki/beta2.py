"""beta2.py: nki.isa of the Beta 2 generation (`import nki`): every call takes its
destination first (`dst=`) and writes it; built on the legacy operations (the result is
retargeted to dst, so no copy is added).
"""
from . import errors
from . import isa as L
from . import ops
from . import record
from .index import IndexExpr
from .ops import (tensor_engine, vector_engine, scalar_engine, gpsimd_engine, sync_engine,
                  unknown_engine)
from .isa import get_nc_version, nc_version, dge_mode, oob_mode, reduce_cmd
from .tensor import Tensor

engine = ops.Engine


def _into(dst, val, api):
    if not isinstance(dst, Tensor):
        raise errors.located('dst= must be an NKI tensor, got %s' % type(dst).__name__, api, 3)
    ops.assign(dst, val)
    return dst


def dma_copy(dst, src, mask=None, dge_mode=None, engine=None, **kw):
    return L.dma_copy(dst=dst, src=src, mask=mask, dge_mode=dge_mode, engine=engine)


def nc_matmul(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, accumulate=None, tile_position=None, tile_size=None,
              perf_mode=None, **kw):
    return ops.nc_matmul(stationary, moving, is_stationary_onezero, is_moving_onezero,
                         is_transpose, None, dst=dst, accumulate=accumulate)


def nc_transpose(dst, data, engine=None, **kw):
    return _into(dst, ops.nc_transpose(data, engine=engine), 'nisa.nc_transpose')


def tensor_copy(dst, src, engine=None, dtype=None, **kw):
    return _into(dst, ops.tensor_copy(src, dtype=dst.dtype, engine=engine), 'nisa.tensor_copy')


def tensor_tensor(dst, data1, data2, op, engine=None, **kw):
    return _into(dst, ops.tensor_tensor(data1, data2, op, dtype=dst.dtype, engine=engine),
                 'nisa.tensor_tensor')


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                  reverse1=False, engine=None, **kw):
    return _into(dst, ops.tensor_scalar(data, op0, operand0, reverse0, op1, operand1, reverse1,
                                        dtype=dst.dtype, engine=engine), 'nisa.tensor_scalar')


def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=None, **kw):
    return _into(dst, ops.activation(op, data, bias=bias, scale=scale, dtype=dst.dtype,
                                     reduce_op=reduce_op, reduce_res=reduce_res),
                 'nisa.activation')


def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, **kw):
    return _into(dst, ops.tensor_reduce(op, data, axis, negate=negate, keepdims=keepdims,
                                        dtype=dst.dtype), 'nisa.tensor_reduce')


def memset(dst, value, engine=None, **kw):
    api = 'nisa.memset'
    tr = record.cur(api)
    v = ops.operand(dst, api)
    ops.memset_view(v, value, record.here(2), tr, api,
                    ops.engine_of(engine, api, (ops.DVE, ops.ACT, ops.POOL)))
    return dst


def iota(dst, expr=None, pattern=None, offset=0, channel_multiplier=0, **kw):
    if expr is None:
        expr = _pattern_expr(dst, pattern, offset, channel_multiplier)
    return _into(dst, ops.iota(expr, dst.dtype), 'nisa.iota')


def _pattern_expr(dst, pattern, offset, cm):
    shape = dst.shape
    rank = len(shape)
    terms = []
    if cm:
        terms.append((-rank, shape[0], int(cm)))
    pat = list(pattern or [])
    for k, (step, n) in enumerate(pat):
        pos = 1 + k
        terms.append((pos - rank, int(n), int(step)))
    return IndexExpr(int(offset), tuple(sorted(terms)), rank)


def reciprocal(dst, data, **kw):
    return _into(dst, L.reciprocal(data, dtype=dst.dtype), 'nisa.reciprocal')


def bn_stats(dst, data, **kw):
    return _into(dst, L.bn_stats(data, dtype=dst.dtype), 'nisa.bn_stats')


def bn_aggr(dst, data, **kw):
    return _into(dst, L.bn_aggr(data, dtype=dst.dtype), 'nisa.bn_aggr')


def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False,
                       **kw):
    return _into(dst, L.tensor_tensor_scan(data0, data1, initial, op0, op1, dtype=dst.dtype),
                 'nisa.tensor_tensor_scan')


def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False, **kw):
    return _into(dst, L.scalar_tensor_tensor(data, op0, operand0, op1, operand1,
                                             reverse0=reverse0, dtype=dst.dtype),
                 'nisa.scalar_tensor_tensor')


def tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res, reverse0=False, **kw):
    return _into(dst, L.tensor_scalar_reduce(data, op0, operand0, reduce_op, reduce_res,
                                             reverse0=reverse0, dtype=dst.dtype),
                 'nisa.tensor_scalar_reduce')


def affine_select(dst, pred, on_true_tile, on_false_value, **kw):
    return _into(dst, L.affine_select(pred, on_true_tile, on_false_value, dtype=dst.dtype),
                 'nisa.affine_select')


for _n in dir(L):
    if not _n.startswith('_') and _n not in globals() and callable(getattr(L, _n)) and \
            getattr(getattr(L, _n), '__name__', '') == _n and \
            getattr(L, _n).__module__ == L.__name__:
        globals()[_n] = getattr(L, _n)
