"""isa.py: nki.isa (`nisa`) of the legacy generation (value-returning): one engine
instruction per call. neuronxcc.nki.isa re-exports it; Beta 2's dst-first forms are in
beta2.py.
"""
import numpy as np

from . import dtypes as D
from . import errors
from . import numerics as N
from . import ops
from . import record
from .index import IndexExpr, Mask
from .ops import (tensor_engine, vector_engine, scalar_engine, gpsimd_engine, sync_engine,
                  unknown_engine, PE, DVE, ACT, POOL)
from .record import here
from .tensor import Tensor, npview

engine = ops.Engine


def get_nc_version():
    tr = record.CUR
    return 3 if tr is None or tr.target == 'trn2' else 2


class nc_version:
    gen2 = 2
    gen3 = 3


class dge_mode:
    none = 0
    swdge = 1
    hwdge = 2
    unknown = 3


class oob_mode:
    error = 0
    skip = 1


class reduce_cmd:
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3


nc_matmul = ops.nc_matmul


def nc_transpose(data, engine=None, mask=None, dtype=None, **kw):
    r = ops.nc_transpose(data, engine=engine, mask=mask)
    return r


def activation(op, data, bias=None, scale=1.0, mask=None, dtype=None, reduce_op=None,
               reduce_res=None, reduce_cmd=None, **kw):
    return ops.activation(op, data, bias=bias, scale=scale, dtype=dtype, mask=mask,
                          reduce_op=reduce_op, reduce_res=reduce_res)


def activation_reduce(op, data, reduce_op, reduce_res, bias=None, scale=1.0, mask=None,
                      dtype=None, **kw):
    return ops.activation(op, data, bias=bias, scale=scale, dtype=dtype, mask=mask,
                          reduce_op=reduce_op, reduce_res=reduce_res,
                          api='nisa.activation_reduce')


def tensor_tensor(data1, data2, op, dtype=None, mask=None, engine=None, **kw):
    return ops.tensor_tensor(data1, data2, op, dtype=dtype, mask=mask, engine=engine)


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None,
                  reverse1=False, dtype=None, mask=None, engine=None, **kw):
    return ops.tensor_scalar(data, op0, operand0, reverse0, op1, operand1, reverse1,
                             dtype=dtype, mask=mask, engine=engine)


def tensor_reduce(op, data, axis, mask=None, dtype=None, negate=False, keepdims=False, **kw):
    return ops.tensor_reduce(op, data, axis, negate=negate, keepdims=keepdims, dtype=dtype,
                             mask=mask, engine=kw.get('engine'))


def tensor_copy(src, mask=None, dtype=None, engine=None, **kw):
    return ops.tensor_copy(src, dtype=dtype, mask=mask, engine=engine)


def memset(shape, value, dtype, mask=None, engine=None, **kw):
    return ops.memset(shape, value, dtype, mask=mask, engine=engine)


def iota(expr, dtype, mask=None, **kw):
    return ops.iota(expr, dtype, mask=mask)


def dma_copy(dst=None, src=None, mask=None, dge_mode=None, engine=None, **kw):
    return ops.dma_copy(dst, src, mask=mask, dge=(None if dge_mode in (None, 3, 2) else False),
                        engine=engine)


# --- ops with their own listing opcode ---------------------------------------------------

def _one(api, op, data, dtype, mask, eng, shape=None, a=None, dst_dtype=None):
    tr = record.cur(api)
    loc = here(3)
    xv = ops.operand(data, api)
    sh = shape or ops.space_of(xv)
    odt = D.as_dtype(dtype) or dst_dtype or data.dtype
    b, out, dv = ops._new(tr, api, loc, sh, odt)
    a = dict(a or {})
    a['api'] = api
    ins = ops._finish(tr, api, loc, op, eng, out, dv, (data,), (xv,), a, mask)
    if ins is not None:
        ops._producer(b, ins)
        ops._est(tr, eng, xv, 8.0 if op == 'recip' else 1.0)
    return out, ins


def reciprocal(data, dtype=None, mask=None, engine=None, **kw):
    api = 'nisa.reciprocal'
    eng = ops.engine_of(engine, api, (DVE, POOL)) or DVE
    out, ins = _one(api, 'recip', data, dtype, mask, eng)
    if ins is not None and record.CUR.numerics:
        with np.errstate(all='ignore'):
            ops.store_values(ins.dst, 1.0 / npview(ins.srcs[0]).astype(np.float32))
    return out


def bn_stats(data, dtype=None, mask=None, **kw):
    """Mean/variance statistics of up to 512 elements per partition (6 values: count, mean
    and variance of the even and of the odd elements)."""
    api = 'nisa.bn_stats'
    xv = ops.operand(data, api)
    P = ops.npart(xv)
    if ops.free_elems(xv) > 512:
        raise errors.located('bn_stats takes at most 512 elements per partition (got %d)'
                             % ops.free_elems(xv), api, 2)
    out, ins = _one(api, 'bn_stats', data, dtype, mask, DVE, shape=(P, 6),
                    dst_dtype=D.float32)
    if ins is not None and record.CUR.numerics:
        x = npview(ins.srcs[0]).astype(np.float64).reshape(P, -1)
        ev, od = x[:, 0::2], x[:, 1::2]
        st = np.zeros((P, 6))
        for k, h in enumerate((ev, od)):
            n = h.shape[1]
            st[:, 3 * k] = n
            if n:
                st[:, 3 * k + 1] = h.mean(axis=1)
                st[:, 3 * k + 2] = h.var(axis=1)
        ops.store_values(ins.dst, st)
    return out


def bn_aggr(data, dtype=None, mask=None, **kw):
    """Combines bn_stats groups (P x 6k, count/mean/variance triples) into mean, variance."""
    api = 'nisa.bn_aggr'
    xv = ops.operand(data, api)
    P = ops.npart(xv)
    if ops.free_elems(xv) % 3:
        raise errors.located('bn_aggr takes bn_stats output (a multiple of 3 values per '
                             'partition)', api, 2)
    out, ins = _one(api, 'bn_aggr', data, dtype, mask, DVE, shape=(P, 2),
                    dst_dtype=D.float32)
    if ins is not None and record.CUR.numerics:
        s = npview(ins.srcs[0]).astype(np.float64).reshape(P, -1, 3)
        n, m, v = s[:, :, 0], s[:, :, 1], s[:, :, 2]
        tot = n.sum(axis=1)
        tot = np.where(tot == 0, 1, tot)
        mean = (n * m).sum(axis=1) / tot
        var = (n * (v + (m - mean[:, None]) ** 2)).sum(axis=1) / tot
        ops.store_values(ins.dst, np.stack([mean, var], axis=1))
    return out


def tensor_tensor_scan(data0, data1, initial, op0, op1, dtype=None, mask=None, reverse0=False,
                       reverse1=False, **kw):
    """dst[:, j] = (data0[:, j] op0 dst[:, j-1]) op1 data1[:, j], dst[:, -1] = initial."""
    api = 'nisa.tensor_tensor_scan'
    tr = record.cur(api)
    loc = here()
    n0, n1 = ops.alu_name(op0, api), ops.alu_name(op1, api)
    v0, v1 = ops.operand(data0, api), ops.operand(data1, api)
    if ops.space_of(v0) != ops.space_of(v1):
        raise errors.located('data0 %s and data1 %s differ in shape'
                             % (ops.space_of(v0), ops.space_of(v1)), api, 2)
    srcs_t, srcs_v = [data0, data1], [v0, v1]
    ini = None
    if isinstance(initial, Tensor):
        iv = ops.operand(initial, api)
        srcs_t.append(initial)
        srcs_v.append(iv)
    else:
        ini = float(initial)
    odt = D.as_dtype(dtype) or data0.dtype
    b, out, dv = ops._new(tr, api, loc, ops.space_of(v0), odt)
    a = {'op0': n0, 'op1': n1, 'initial': ini, 'api': api}
    ins = ops._finish(tr, api, loc, 'scan', DVE, out, dv, srcs_t, srcs_v, a, mask)
    if ins is None:
        return out
    ops._producer(b, ins)
    ops._est(tr, DVE, v0, 2.0)
    if tr.numerics:
        x0 = npview(ins.srcs[0]).astype(np.float32)
        P = x0.shape[0]
        x0 = x0.reshape(P, -1)
        x1 = npview(ins.srcs[1]).astype(np.float32).reshape(P, -1)
        prev = (npview(ins.srcs[2]).astype(np.float32).reshape(P) if ini is None
                else np.full(P, ini, dtype=np.float32))
        res = np.empty_like(x0)
        for j in range(x0.shape[1]):
            t = N.alu(n0, x0[:, j], prev)
            prev = D.cast(N.alu(n1, t, x1[:, j]), odt)
            res[:, j] = prev
        ops.store_values(ins.dst, res)
    return out


def scalar_tensor_tensor(data, op0, operand0, op1, operand1, reverse0=False, dtype=None,
                         mask=None, engine=None, **kw):
    """(data op0 operand0) op1 operand1, operand0 a number or (P, 1) tile, operand1 a tile."""
    api = 'nisa.scalar_tensor_tensor'
    tr = record.cur(api)
    loc = here()
    n0, n1 = ops.alu_name(op0, api), ops.alu_name(op1, api)
    xv = ops.operand(data, api)
    yv = ops.operand(operand1, api)
    i0, v0 = ops._scalar_operand(operand0, api)
    srcs_t, srcs_v = [data, operand1], [xv, yv]
    if v0 is not None:
        srcs_t.append(operand0)
        srcs_v.append(v0)
    eng = ops.engine_of(engine, api, (DVE, POOL)) or DVE
    odt = D.as_dtype(dtype) or data.dtype
    b, out, dv = ops._new(tr, api, loc, ops.space_of(xv), odt)
    a = {'op0': n0, 'op1': n1, 'imm0': i0, 'rev0': bool(reverse0), 'api': api}
    ins = ops._finish(tr, api, loc, 'stt', eng, out, dv, srcs_t, srcs_v, a, mask)
    if ins is None:
        return out
    ops._producer(b, ins)
    ops._est(tr, eng, xv, 2.0)
    if tr.numerics:
        x = npview(ins.srcs[0]).astype(np.float32)
        t = ops.scalar_op(n0, x, i0, ins.srcs[2] if v0 is not None else None, reverse0)
        ops.store_values(ins.dst, N.alu(n1, t, npview(ins.srcs[1]).astype(np.float32)
                                        .reshape(x.shape)))
    return out


def tensor_scalar_reduce(data, op0, operand0, reduce_op, reduce_res, reverse0=False, dtype=None,
                         mask=None, **kw):
    api = 'nisa.tensor_scalar_reduce'
    tr = record.cur(api)
    loc = here()
    n0, rn = ops.alu_name(op0, api), ops.alu_name(reduce_op, api)
    xv = ops.operand(data, api)
    rv = ops.operand(reduce_res, api)
    i0, v0 = ops._scalar_operand(operand0, api)
    srcs_t, srcs_v = [data], [xv]
    if v0 is not None:
        srcs_t.append(operand0)
        srcs_v.append(v0)
    odt = D.as_dtype(dtype) or data.dtype
    b, out, dv = ops._new(tr, api, loc, ops.space_of(xv), odt)
    a = {'op0': n0, 'rop': rn, 'imm0': i0, 'rev0': bool(reverse0), 'api': api}
    ins = ops._finish(tr, api, loc, 'tsr', DVE, out, dv, srcs_t + [reduce_res], srcs_v + [rv],
                      a, mask)
    if ins is None:
        return out
    # reduce_res is written too: the last source, marked written (the emitter names it)
    ins.a['res_idx'] = len(ins.srcs) - 1
    ins.a['wsrc'] = (len(ins.srcs) - 1,)
    ops._producer(b, ins)
    ops._est(tr, DVE, xv)
    if tr.numerics:
        x = npview(ins.srcs[0]).astype(np.float32)
        r = ops.scalar_op(n0, x, i0, ins.srcs[1] if v0 is not None else None, reverse0)
        ops.store_values(ins.dst, r)
        ops.store_values(ins.srcs[-1], N.reduce(rn, r, tuple(range(1, r.ndim))))
    return out


class AffinePred:
    """A predicate over several index axes (affine_select): expr (cmp) 0."""

    def __init__(self, expr, cmp):
        self.expr = expr
        self.cmp = cmp


def affine_select(pred, on_true_tile, on_false_value, dtype=None, mask=None, **kw):
    """dst = pred ? on_true_tile : on_false_value, pred an affine comparison of index
    grids (e.g. i_q - i_k >= 0)."""
    api = 'nisa.affine_select'
    tr = record.cur(api)
    loc = here()
    if isinstance(pred, Mask):
        if len(pred.conds) != 1:
            raise errors.located('affine_select takes one comparison', api, 2)
        p, rank, n, lo, hi = pred.conds[0]
        raise errors.located('affine_select with a single-axis predicate: use mask=', api, 2)
    if not isinstance(pred, AffinePred):
        raise errors.located('affine_select takes an affine predicate of index grids such as '
                             '(i_q - i_k >= 0)', api, 2)
    xv = ops.operand(on_true_tile, api)
    odt = D.as_dtype(dtype) or on_true_tile.dtype
    b, out, dv = ops._new(tr, api, loc, ops.space_of(xv), odt)
    e = pred.expr
    a = {'cmp': pred.cmp, 'false': float(on_false_value), 'const': e.const, 'terms': e.terms,
         'rank': e.rank, 'api': api}
    ins = ops._finish(tr, api, loc, 'select', POOL, out, dv, (on_true_tile,), (xv,), a, mask)
    if ins is None:
        return out
    ops._producer(b, ins)
    ops._est(tr, POOL, xv)
    if tr.numerics:
        x = npview(ins.srcs[0]).astype(np.float32)
        shape = x.shape
        vals = np.full(shape, e.const, dtype=np.float64)
        for p, n, c in e.terms:
            s = [1] * len(shape)
            s[e.rank + p] = n
            vals = vals + c * np.arange(n).reshape(s)
        cond = N.alu(pred.cmp, vals.astype(np.float32), np.float32(0)) != 0
        ops.store_values(ins.dst, np.where(cond, x, np.float32(on_false_value)))
    return out


def _pred(self, b, kind):
    if len(self.terms) == 1:
        return IndexExpr._orig_bound(self, b, kind)
    cmp = {'lt': 'less', 'le': 'less_equal', 'gt': 'greater', 'ge': 'greater_equal'}[kind]
    return AffinePred(self - b, cmp)


# comparisons of multi-axis index expressions make affine_select predicates
if not hasattr(IndexExpr, '_orig_bound'):
    IndexExpr._orig_bound = IndexExpr._bound
    IndexExpr._bound = _pred


def _unsupported(name):
    def f(*a, **k):
        raise errors.located('is not supported by the neuron-explorer NKI shim', 'nisa.' + name,
                             2)
    f.__name__ = name
    return f


for _n in ('nc_matmul_mx', 'quantize_mx', 'nc_stream_shuffle', 'core_barrier', 'sendrecv',
           'rng', 'rand2', 'nonzero_with_count', 'topk', 'dma_compute', 'max8',
           'nc_find_index8', 'nc_match_replace8', 'local_gather', 'range_select',
           'tensor_copy_predicated', 'select', 'dma_transpose', 'tensor_copy_dynamic_src',
           'tensor_copy_dynamic_dst', 'register_alloc', 'register_load', 'register_store',
           'register_move', 'builtin_custom_op', 'exponential', 'sequence_bounds',
           'tensor_partition_reduce', 'nc_n_gather', 'activation_reduce_1d'):
    if _n not in globals():
        globals()[_n] = _unsupported(_n)
