"""test_ops_beta2.py: one small kernel per supported operation of the Beta 2 API
(`import nki`: dst-first nisa, explicit buffers, slices, nl.ds, .ap(), ranges and the 0.3
value-returning wrappers), numerics against numpy, then compiled through the real binary.
"""
import sys

import numpy as np

import harness as H
import nki
import nki.isa as nisa
import nki.language as nl
from nx_nki import driver

FULL = driver.level() == 'full'
rng = np.random.default_rng(11)


def rnd(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(kernel, args, want, full_only=False, atol=1e-3, rtol=1e-3):
    got = nki.simulate_kernel(kernel, *args)
    H.close(got, want, atol, rtol, kernel.__name__)
    if full_only and not FULL:
        H.raises(lambda: nki.baremetal(kernel)(*args), 'not supported yet')
        return
    H.close(nki.baremetal(kernel)(*args), want, atol, rtol, kernel.__name__ + ' (baremetal)')


@nki.jit
def b_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    y = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    z = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(a.shape[0] // 128):
        nisa.dma_copy(dst=x, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=y, src=b[i * 128:(i + 1) * 128, :])
        nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=z)
    return out


def test_dma_copy_tensor_tensor():
    a, b = rnd(256, 64), rnd(256, 64)
    check(b_add, (a, b), a + b)


@nki.jit
def b_matmul(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    for k in nl.range(K // 128):
        lt = nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.sbuf)
        rt = nl.ndarray((128, N), dtype=rhs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=lt, src=lhsT[nl.ds(k * 128, 128), :])
        nisa.dma_copy(dst=rt, src=rhs[nl.ds(k * 128, 128), :])
        nisa.nc_matmul(acc, lt, rt)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_nc_matmul_first_write_overwrites():
    lhsT, rhs = rnd(384, 64), rnd(384, 128)
    check(b_matmul, (lhsT, rhs), lhsT.T @ rhs, atol=2e-3)


@nki.jit
def b_matmul_acc(lhsT, rhs):
    out = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.psum)
    lt = nl.ndarray((128, 64), dtype=lhsT.dtype, buffer=nl.sbuf)
    rt = nl.ndarray((128, 128), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=lt, src=lhsT)
    nisa.dma_copy(dst=rt, src=rhs)
    nisa.nc_matmul(acc, lt, rt, accumulate=False)
    nisa.nc_matmul(acc, lt, rt, accumulate=True)
    res = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_nc_matmul_accumulate_flag():
    lhsT, rhs = rnd(128, 64), rnd(128, 128)
    check(b_matmul_acc, (lhsT, rhs), 2 * (lhsT.T @ rhs), atol=2e-3)


@nki.jit
def b_act(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    y = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    m = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.tensor_reduce(dst=m, op=nl.max, data=x, axis=1, negate=True, keepdims=True)
    nisa.activation(dst=y, op=nl.exp, data=x, bias=m)
    nisa.dma_copy(dst=out, src=y)
    return out


def test_activation_reduce_dst_first():
    a = rnd(128, 32)
    check(b_act, (a,), np.exp(a - a.max(1, keepdims=True)), atol=1e-5)


@nki.jit
def b_ts(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.tensor_scalar(dst=x, data=x, op0=nl.multiply, operand0=4.0)
    nisa.memset(dst=x[:, 0:8], value=1.0)
    nisa.dma_copy(dst=out, src=x)
    return out


def test_tensor_scalar_memset_in_place():
    a = rnd(128, 32)
    want = a * 4.0
    want[:, 0:8] = 1.0
    check(b_ts, (a,), want)


@nki.jit
def b_ap(a):
    out = nl.ndarray((128, 16), dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.sbuf)
    y = nl.ndarray((128, 16), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.tensor_copy(dst=y, src=x.ap([[32, 128], [2, 16]]))
    nisa.dma_copy(dst=out, src=y)
    return out


def test_access_pattern_ap():
    a = rnd(128, 32)
    check(b_ap, (a,), a[:, 0::2])


@nki.jit
def b_wrappers(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.static_range(2):
        t = nl.load(a[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.copy(nl.multiply(t, t)))
    return out


def test_value_returning_wrappers():
    a = rnd(256, 16)
    check(b_wrappers, (a,), a * a)


@nki.jit
def b_transpose(a):
    out = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    p = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.psum)
    y = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.nc_transpose(dst=p, data=x)
    nisa.tensor_copy(dst=y, src=p)
    nisa.dma_copy(dst=out, src=y)
    return out


def test_nc_transpose_dst_first():
    a = rnd(128, 64)
    check(b_transpose, (a,), a.T)


@nki.jit
def b_recip(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.reciprocal(dst=x, data=x)
    nisa.dma_copy(dst=out, src=x)
    return out


def test_reciprocal_dst_first():
    a = rnd(128, 8) + 4.0
    check(b_recip, (a,), 1.0 / a, atol=1e-5)


@nki.jit
def b_scan(a, b):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    y = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    z = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.dma_copy(dst=y, src=b)
    nisa.tensor_tensor_scan(dst=z, data0=x, data1=y, initial=1.0, op0=nl.multiply,
                            op1=nl.add)
    nisa.dma_copy(dst=out, src=z)
    return out


def test_tensor_tensor_scan_dst_first():
    a, b = rnd(128, 8) * 0.5, rnd(128, 8)
    want = np.zeros_like(a)
    prev = np.ones(128, np.float32)
    for j in range(8):
        prev = a[:, j] * prev + b[:, j]
        want[:, j] = prev
    check(b_scan, (a, b), want, full_only=True, atol=1e-4)


if __name__ == '__main__':
    sys.exit(H.run(sys.modules[__name__]))
