"""test_ops_legacy.py: one small kernel per supported operation of the legacy API
(neuronxcc.nki), its numerics checked against numpy, then compiled through the real
binary (listing -> NEFF). Operations the binary's listing cannot express yet must fail with
the documented 'not supported yet' error, never compile as another operation.
"""
import sys

import numpy as np

import harness as H
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt
from nx_nki import driver
from nx_nki.dtypes import tagged, round_bf16

FULL = driver.level() == 'full'
rng = np.random.default_rng(7)


def rnd(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(kernel, args, want, full_only=False, atol=1e-3, rtol=1e-3, grid=None):
    """Numerics (simulate_kernel) and compilation (baremetal) of kernel(*args)."""
    k = kernel[grid] if grid else kernel
    got = nki.simulate_kernel(k, *args)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            H.close(g, w, atol, rtol, kernel.__name__)
    else:
        H.close(got, want, atol, rtol, kernel.__name__)
    if full_only and not FULL:
        H.raises(lambda: nki.baremetal(k)(*args), 'not supported yet')
        return got
    got2 = nki.baremetal(k)(*args)
    if not isinstance(want, tuple):
        H.close(got2, want, atol, rtol, kernel.__name__ + ' (baremetal)')
    return got


# --- kernels ------------------------------------------------------------------------------

@nki.jit
def k_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        y = nl.load(b[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(x, y))
    return out


def test_load_store_add():
    a, b = rnd(256, 64), rnd(256, 64)
    check(k_add, (a, b), a + b)


@nki.jit
def k_ops(a, b):
    out = nl.ndarray((4, 128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    nl.store(out[0], value=nisa.tensor_tensor(x, y, nl.multiply))
    nl.store(out[1], value=nisa.tensor_tensor(x, y, nl.subtract))
    nl.store(out[2], value=nisa.tensor_tensor(x, y, nl.maximum))
    nl.store(out[3], value=x * y + x - y)
    return out


def test_tensor_tensor():
    a, b = rnd(128, 32), rnd(128, 32)
    check(k_ops, (a, b), np.stack([a * b, a - b, np.maximum(a, b), a * b + a - b]))


@nki.jit
def k_ts1(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out, value=nisa.tensor_scalar(x, nl.multiply, 2.5))
    return out


def test_tensor_scalar_one_op():
    a = rnd(128, 16)
    check(k_ts1, (a,), a * 2.5)


@nki.jit
def k_ts2(a, c):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    col = nl.load(c)
    nl.store(out, value=nisa.tensor_scalar(x, nl.subtract, col, op1=nl.multiply, operand1=3.0))
    return out


def test_tensor_scalar_two_ops_column():
    a, c = rnd(128, 16), rnd(128, 1)
    check(k_ts2, (a, c), (a - c) * 3.0, full_only=True)


@nki.jit
def k_ts_rev(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out, value=nisa.tensor_scalar(x, nl.subtract, 1.0, reverse0=True))
    return out


def test_tensor_scalar_reverse():
    a = rnd(128, 16)
    check(k_ts_rev, (a,), 1.0 - a, full_only=True)


@nki.jit
def k_reduce(a):
    out = nl.ndarray((128, 3), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    s = nisa.tensor_reduce(nl.add, x, axis=1, keepdims=True)
    m = nisa.tensor_reduce(nl.max, x, axis=1, keepdims=True, negate=True)
    mean = nl.mean(x, axis=1, keepdims=True)
    nl.store(out[:, 0:1], value=s)
    nl.store(out[:, 1:2], value=m)
    nl.store(out[:, 2:3], value=mean)
    return out


def test_tensor_reduce():
    a = rnd(128, 64)
    want = np.stack([a.sum(1), -a.max(1), a.mean(1)], axis=1)
    check(k_reduce, (a,), want)


@nki.jit
def k_act(a, bias):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    bt = nl.load(bias)
    nl.store(out, value=nisa.activation(nl.exp, x, bias=bt, scale=0.5))
    return out


def test_activation_bias_scale():
    a, b = rnd(128, 32), rnd(128, 1)
    check(k_act, (a, b), np.exp(a * 0.5 + b), atol=1e-4, rtol=1e-4)


@nki.jit
def k_act_fns(a):
    out = nl.ndarray((3, 128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out[0], value=nl.tanh(x))
    nl.store(out[1], value=nl.square(x))
    nl.store(out[2], value=nl.sigmoid(x))
    return out


@nki.jit
def k_act_reduce(a):
    out = nl.ndarray((2, 128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    s = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    e = nisa.activation_reduce(nl.exp, x, reduce_op=nl.add, reduce_res=s)
    nl.store(out[0], value=e)
    nl.store(out[1], value=nisa.tensor_scalar(e, nl.multiply, s))
    return out


def test_activation_with_reduction():
    a = rnd(128, 32)
    e = np.exp(a)
    check(k_act_reduce, (a,), np.stack([e, e * e.sum(1, keepdims=True)]), full_only=True,
          atol=1e-3, rtol=1e-4)


@nki.jit
def k_reduce_mid(a):
    out = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)                   # 128 x 64, seen as 128 x 4 x 16
    v = x.reshape((128, 4, 16))
    nl.store(out, value=nl.sum(v, axis=2))
    return out


def test_reduce_keeps_outer_free_axes():
    a = rnd(128, 64)
    check(k_reduce_mid, (a,), a.reshape(128, 4, 16).sum(2), full_only=True, atol=1e-4)


def test_activation_functions():
    a = rnd(128, 32)
    check(k_act_fns, (a,), np.stack([np.tanh(a), a * a, 1 / (1 + np.exp(-a))]), atol=1e-5)


@nki.jit
def k_silu(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nl.silu(nl.load(a)))
    return out


def test_activation_silu_needs_full_listing():
    a = rnd(128, 32)
    check(k_silu, (a,), a / (1 + np.exp(-a)), full_only=True, atol=1e-5)


@nki.jit
def k_matmul(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        lt = nl.load(lhsT[k * 128:(k + 1) * 128, :])
        rt = nl.load(rhs[k * 128:(k + 1) * 128, :])
        acc += nisa.nc_matmul(lt, rt)
    nl.store(out, value=nl.copy(acc, dtype=nl.float32))
    return out


def test_nc_matmul_psum_accumulation():
    lhsT, rhs = rnd(256, 64), rnd(256, 128)
    check(k_matmul, (lhsT, rhs), lhsT.T @ rhs, atol=1e-3)
    # the nl.zeros memset folds into the first matmul's flags (no MEMSET, no ACC on it)
    res = nki.baremetal(k_matmul)
    res(lhsT, rhs)
    lst = res.last.listing
    assert ' memset ' not in lst, lst
    mm = [l for l in lst.split('\n') if ' matmul ' in l]
    assert len(mm) == 2 and ' acc' not in mm[0] and ' acc' in mm[1], mm


@nki.jit
def k_matmul_result_acc(a, b, c, d):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    r = nisa.nc_matmul(nl.load(a), nl.load(b))     # the first matmul's own result ...
    r += nisa.nc_matmul(nl.load(c), nl.load(d))    # ... which the second adds to
    nl.store(out, value=nl.copy(r))
    return out


def test_nc_matmul_accumulates_into_a_matmul_result():
    a, b, c, d = rnd(128, 128), rnd(128, 512), rnd(128, 128), rnd(128, 512)
    check(k_matmul_result_acc, (a, b, c, d), a.T @ b + c.T @ d, atol=1e-3)
    res = nki.baremetal(k_matmul_result_acc)
    res(a, b, c, d)
    mm = [l for l in res.last.listing.split('\n') if ' matmul ' in l]
    assert len(mm) == 2 and ' acc' not in mm[0] and ' acc' in mm[1], mm


@nki.jit
def k_nlmatmul(x, y):
    out = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x)            # 64 x 128 (M x K)
    b = nl.load(y)            # 128 x 128 (K x N)
    nl.store(out, value=nl.copy(nl.matmul(a, b)))
    return out


def test_nl_matmul_inserts_transpose():
    x, y = rnd(64, 128), rnd(128, 128)
    check(k_nlmatmul, (x, y), x @ y, atol=1e-3)


@nki.jit
def k_transpose(a):
    out = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    t = nisa.nc_transpose(x)
    nl.store(out, value=nl.copy(t))
    return out


def test_nc_transpose():
    a = rnd(128, 64)
    check(k_transpose, (a,), a.T)


@nki.jit
def k_cast(a):
    out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out, value=nl.copy(x, dtype=nl.bfloat16))
    return out


def test_copy_cast_bf16():
    a = rnd(128, 64)
    got = check(k_cast, (a,), round_bf16(a), atol=0, rtol=0)
    assert got.nki_dtype is nl.bfloat16


@nki.jit
def k_bf16_in(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a, dtype=nl.float32)
    nl.store(out, value=x)
    return out


def test_bf16_input_tagged():
    a = tagged(rnd(128, 32), nl.bfloat16)
    check(k_bf16_in, (a,), np.asarray(a), atol=0, rtol=0, full_only=True)


@nki.jit
def k_memset(a):
    out = nl.ndarray((3, 128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
    z = nl.zeros((128, 16), dtype=nl.float32)
    f = nl.full((128, 16), 2.5, dtype=nl.float32)
    m = nisa.memset((128, 16), -1.0, nl.float32)
    nl.store(out[0], value=z)
    nl.store(out[1], value=f)
    nl.store(out[2], value=m)
    return out


def test_memset_zeros_full():
    want = np.stack([np.zeros((128, 16)), np.full((128, 16), 2.5), np.full((128, 16), -1.0)])
    check(k_memset, (rnd(1, 1),), want)


@nki.jit
def k_iota(a):
    out = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:16]
    t = nisa.iota(i_p * 16 + i_f, dtype=nl.float32)
    nl.store(out, value=t)
    return out


def test_iota():
    check(k_iota, (rnd(1, 1),), np.arange(128 * 16, dtype=np.float32).reshape(128, 16))


@nki.jit
def k_recip(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.reciprocal(nl.load(a)))
    return out


def test_reciprocal():
    a = rnd(128, 16) + 3.0
    check(k_recip, (a,), 1.0 / a, atol=1e-5)


@nki.jit
def k_scan(a, b):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    nl.store(out, value=nisa.tensor_tensor_scan(x, y, 0.0, nl.multiply, nl.add))
    return out


def test_tensor_tensor_scan():
    a, b = rnd(128, 16) * 0.5, rnd(128, 16)
    want = np.zeros_like(a)
    prev = np.zeros(128, np.float32)
    for j in range(16):
        prev = a[:, j] * prev + b[:, j]
        want[:, j] = prev
    check(k_scan, (a, b), want, full_only=True, atol=1e-4)


@nki.jit
def k_bn(a):
    out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    st = nisa.bn_stats(x)
    nl.store(out, value=nisa.bn_aggr(st))
    return out


def test_bn_stats_aggr():
    a = rnd(128, 64)
    check(k_bn, (a,), np.stack([a.mean(1), a.var(1)], axis=1), full_only=True, atol=1e-4)


@nki.jit
def k_causal(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    i_q, i_k = nl.mgrid[0:128, 0:128]
    nl.store(out, value=nisa.affine_select(i_q - i_k >= 0, x, -1000.0))
    return out


def test_affine_select_causal():
    a = rnd(128, 128)
    want = np.where(np.tril(np.ones((128, 128))) > 0, a, -1000.0)
    check(k_causal, (a,), want, full_only=True)


@nki.jit
def k_stt(a, b):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    nl.store(out, value=nisa.scalar_tensor_tensor(x, nl.multiply, 2.0, nl.add, y))
    return out


def test_scalar_tensor_tensor():
    a, b = rnd(128, 16), rnd(128, 16)
    check(k_stt, (a, b), a * 2 + b, full_only=True)


@nki.jit
def k_bcast(g, a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    gt = nl.load(g.reshape((1, g.shape[0])))
    x = nl.load(a)
    nl.store(out, value=nl.multiply(x, gt.broadcast_to((128, g.shape[0]))))
    return out


def test_broadcast_to_partitions():
    g, a = rnd(64), rnd(128, 64)
    check(k_bcast, (g, a), a * g[None, :], atol=1e-3)


@nki.jit
def k_mask(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ix = nl.arange(128)[:, None]
    iy = nl.arange(a.shape[1])[None, :]
    n = a.shape[0]
    for i in nl.affine_range((n + 127) // 128):
        t = nl.load(a[i * 128 + ix, iy], mask=(i * 128 + ix < n))
        t2 = nl.exp(t, mask=(i * 128 + ix < n))
        nl.store(out[i * 128 + ix, iy], value=t2, mask=(i * 128 + ix < n))
    return out


@nki.jit
def k_mask_into(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((2, nl.par_dim(128), a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    res = nl.ndarray((2, nl.par_dim(128), a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    ix = nl.arange(128)[:, None]
    iy = nl.arange(a.shape[1])[None, :]
    n = a.shape[0]
    for i in nl.affine_range(2):
        buf[i, ix, iy] = nl.load(a[128 * i + ix, iy], mask=-128 * i + -1 * ix + (n - 1) >= 0)
        res[i, ix, iy] = nisa.tensor_scalar(data=buf[i, ix, iy], op0=nl.multiply, operand0=3.0,
                                            mask=-128 * i + -1 * ix + (n - 1) >= 0)
        nl.store(out[128 * i + ix, iy], value=res[i, ix, iy], mask=(128 * i + ix < n))
    return out


def test_masked_results_assigned_into_tiles():
    a = rnd(200, 16)
    check(k_mask_into, (a,), 3 * a)


def test_masks_and_grids():
    a = rnd(200, 32)
    check(k_mask, (a,), np.exp(a), atol=1e-5)


@nki.jit
def k_loop_reduce(a):
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(4):
        x = nl.load(a[:, j * 16:(j + 1) * 16])
        s = nisa.tensor_reduce(nl.add, x, axis=1, keepdims=True)
        acc[...] = nl.loop_reduce(s, op=np.add, loop_indices=[j])
    nl.store(out, value=acc)
    return out


def test_loop_reduce():
    a = rnd(128, 64)
    check(k_loop_reduce, (a,), a.sum(1, keepdims=True), atol=1e-4)


@nki.jit
def k_spmd(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ox = nl.program_id(0) * 128
    oy = nl.program_id(1) * 64
    ix = ox + nl.arange(128)[:, None]
    iy = oy + nl.arange(64)[None, :]
    nl.store(out[ix, iy], value=nl.load(a[ix, iy]) + nl.load(b[ix, iy]))
    return out


def test_spmd_grid():
    a, b = rnd(256, 128), rnd(256, 128)
    check(k_spmd, (a, b), a + b, grid=(2, 2))


@nki.jit
def k_const(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    c = nl.shared_constant(np.full((128, 16), 3.0, dtype=np.float32))
    nl.store(out, value=nl.load(a) * nl.load(c))
    return out


def test_shared_constant():
    a = rnd(128, 16)
    check(k_const, (a,), a * 3.0)


@nki.jit
def k_blocks(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((2, nl.par_dim(128), 32), dtype=a.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        t[j] = nl.load(a[:, j * 32:(j + 1) * 32])
    for j in nl.affine_range(2):
        nl.store(out[:, j * 32:(j + 1) * 32], value=nl.negative(t[j]))
    return out


def test_block_dims():
    a = rnd(128, 64)
    check(k_blocks, (a,), -a)


@nki.jit
def k_ltrans(a):
    out = nl.ndarray((32, 64), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load_transpose2d(a))
    return out


def test_load_transpose2d():
    a = tagged(rnd(64, 32), nl.bfloat16)
    check(k_ltrans, (a,), np.asarray(a).T, atol=0, rtol=0, full_only=True)


@nki.jit
def k_placeholder(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


def test_placeholder_inputs_have_no_numerics():
    r = nki.baremetal(k_placeholder)(nt.tensor[[128, 64], nl.bfloat16])
    assert r is None
    # inputs given by keyword, placeholders and arrays alike
    assert nki.baremetal(k_placeholder)(a=nt.tensor[[128, 64], nl.bfloat16]) is None
    a = rnd(128, 64)
    H.close(nki.simulate_kernel(k_placeholder, a=a), a)


def test_benchmark_latency():
    b = nki.benchmark(warmup=1, iters=2)(k_add)
    b(rnd(256, 64), rnd(256, 64))
    p99 = b.benchmark_result.nc_latency.get_latency_percentile(99)
    assert p99 > 0 and p99 == b.benchmark_result.nc_latency.get_latency_percentile(50)


def test_profile_writes_neff_ntff_summary():
    import json
    import os
    d = H.tmpdir()
    nki.profile(working_directory=d, save_neff_name='k.neff', save_trace_name='k.ntff')(
        k_add)(rnd(256, 64), rnd(256, 64))
    for f in ('k.neff', 'k.ntff', 'k.json'):
        assert os.path.getsize(os.path.join(d, f)) > 0, f
    with open(os.path.join(d, 'k.json')) as f:
        js = json.load(f)
    # the summary-json shape: {"<profile>": {Summary fields}}, the profile named after k.ntff
    assert list(js) == ['k'], js
    assert js['k']['total_time'] > 0, js


def keep_all(a, tile):
    # eight 8 KiB tiles, tile(loaded tile), all live until the end: 64 KiB per partition
    out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
    ts = [tile(nl.load(a[:, j * 2048:(j + 1) * 2048])) for j in range(8)]
    acc = ts[0]
    for t in ts[1:]:
        acc = nl.add(acc, t)
    for t in ts:
        acc = nl.add(acc, t)
    nl.store(out, value=acc)
    return out


@nki.jit
def k_keep(a):
    # the loaded tiles themselves
    return keep_all(a, lambda t: t)


def test_spill_when_sbuf_is_too_small():
    a = rnd(128, 8 * 2048)
    want = 2 * a.reshape(128, 8, 2048).sum(1)
    k = nki.baremetal(k_keep, nx_policy='sbuf=40960', save_trace_name=H.tmpdir() + '/k.ntff')
    H.close(k(a), want, 1e-3, 1e-3, 'spilled kernel')
    prog = k.last.prog
    assert prog.spill_save > 0 and prog.spill_reload > 0, (prog.spill_save, prog.spill_reload)
    assert 'spill' in k.last.listing and k.last.sim_us > 0
    # with the target's SBUF nothing spills
    k2 = nki.baremetal(k_keep)
    k2(a)
    assert k2.last.prog.spill_save == 0


def test_profile_counts_the_spills():
    # the spill space is a `spill` tensor of the listing: the profile's Summary counts the
    # bytes saved to it and reloaded from it, as the real profiler's spill_*_bytes
    import json
    import os
    d = H.tmpdir()
    p = nki.profile(working_directory=d, save_neff_name='s.neff', save_trace_name='s.ntff',
                    nx_policy='sbuf=40960,numerics=off')(k_keep)
    p(rnd(128, 8 * 2048))
    prog = p.last.prog
    assert prog.spill_save > 0 and prog.spill_reload > 0
    kinds = [x.split()[2] for x in p.last.listing.splitlines() if x.startswith('tensor ')]
    assert 'spill' in kinds, kinds
    with open(os.path.join(d, 's.json')) as f:
        js = json.load(f)['s']  # {"<profile>": {Summary fields}}, named after s.ntff
    assert js['spill_save_bytes'] == prog.spill_save, (js['spill_save_bytes'], prog.spill_save)
    assert js['spill_reload_bytes'] == prog.spill_reload, (js['spill_reload_bytes'],
                                                           prog.spill_reload)


@nki.jit
def k_keep_computed(a):
    # computed tiles: exp of each loaded tile
    return keep_all(a, nl.exp)


def test_spill_saves_triggered_by_the_writer():
    # like a store, a spill save is triggered by the engine that last wrote the tile
    # (spill_trigger=writer, the default; a loaded tile's by Sync), or by Sync for all
    from nx_nki.ops import SP, ENGINE_NAMES
    a = rnd(128, 8 * 2048)
    want = 2 * np.exp(a).reshape(128, 8, 2048).sum(1)
    trig = {}
    for pol in ('', 'spill_trigger=sync', 'spill_trigger=writer'):
        k = nki.baremetal(k_keep_computed, nx_policy='sbuf=40960' + (',' + pol if pol else ''))
        H.close(k(a), want, 1e-3, 1e-3, 'spilled kernel ' + pol)
        saves = [i for i in k.last.prog.ins
                 if i.op == 'dma' and i.a.get('kind') == 'spill_save']
        assert saves, pol
        trig[pol] = sorted(set(ENGINE_NAMES[i.eng] for i in saves))
        for i in saves:
            assert i.a['q'].owner == i.eng, (pol, i.a['q'].name)
        reloads = [i for i in k.last.prog.ins
                   if i.op == 'dma' and i.a.get('kind') == 'spill_reload']
        assert reloads and all(i.eng == SP for i in reloads), pol
    assert trig['spill_trigger=sync'] == ['Sync'], trig
    assert trig[''] == trig['spill_trigger=writer'] == ['Scalar'], trig
    H.raises(lambda: nki.baremetal(k_keep, nx_policy='spill_trigger=gpsimd')(a),
             "bad value 'gpsimd' for spill_trigger")


def test_spill_ahead_keeps_room_in_the_pool():
    # spill_ahead=N evicts ahead of need until the pool holds N - 1 more tiles of the size
    # just placed: the numbers stay right and nothing is saved that the default keeps
    a = rnd(128, 8 * 2048)
    want = 2 * a.reshape(128, 8, 2048).sum(1)
    progs = {}
    for n in (1, 3):
        k = nki.baremetal(k_keep, nx_policy='sbuf=40960,spill_ahead=%d' % n)
        H.close(k(a), want, 1e-3, 1e-3, 'spill_ahead=%d' % n)
        progs[n] = k.last.prog
    assert progs[3].spill_reload >= progs[1].spill_reload > 0, (progs[1].spill_reload,
                                                               progs[3].spill_reload)
    H.raises(lambda: nki.baremetal(k_keep, nx_policy='spill_ahead=x')(a),
             "bad value 'x' for spill_ahead")


def test_pooled_dependencies_follow_byte_ranges():
    # pooled SBUF tracks accesses per 2 KiB chunk; within one, a write next to bytes
    # another engine keeps reading does not wait for those reads, a write over them does
    from nx_nki import compiler, dtypes
    from nx_nki.ops import PE, DVE
    from nx_nki.record import Ins
    from nx_nki.tensor import Buf
    c = Buf((128, 128), dtypes.float32, 'sbuf', ('t', 1))          # 512 B a partition
    t = Buf((128, 256), dtypes.float32, 'sbuf', ('t', 2))          # 1 KiB a partition
    loc = ('t.py', 1)

    def ins(op, eng, dst, srcs, addrs):
        i = Ins(op, eng, loc, (), dst, srcs, {})
        i.addr = addrs
        return i

    cv = (c, 0, 0, ((1, 128), (1, 128)))
    tv = (t, 0, 0, ((1, 128), (1, 256)))
    out = (t, 0, 0, ((1, 128), (1, 256)))
    for at, waits in ((512, False), (256, True)):
        prog = [ins('copy', PE, None, (cv,), [None, (None, 0)]),      # reads bytes 0..511
                ins('copy', PE, None, (cv,), [None, (None, 1536)]),   # and 1536..2047
                ins('copy', DVE, out, (tv,), [(None, at), (None, 2048)])]
        deps = compiler._deps(prog)[0]
        assert (PE in deps[2]) == waits, (at, deps[2])


@nki.jit
def k_block(a, w):
    # a block of four 2 KiB tiles of w loaded once and read, half a tile at a time, in every
    # iteration of the loop over a's eight row tiles
    out = nl.ndarray((8, 128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    ws = [nl.load(w[:, j * 512:(j + 1) * 512]) for j in range(4)]
    for i in nl.affine_range(8):
        acc = nl.load(a[i])
        for j in range(4):
            acc = nl.add(acc, ws[j][:, 0:256])
            acc = nl.add(acc, ws[j][:, 256:512])
        nl.store(out[i], value=acc)
    return out


def _reloaded(kernel, pol, loads, row):
    """Runs kernel (k_block's arguments and result) with policy pol: numerics right, one
    re-loaded block with `loads` re-loads of `row` elements per partition, w read once per
    iteration. Returns the run."""
    a, w = rnd(8, 128, 256), rnd(128, 2048)
    k = nki.baremetal(kernel, nx_policy=pol)
    H.close(k(a, w), a + w.reshape(128, 8, 256).sum(1)[None], 1e-3, 1e-3, pol)
    prog = k.last.prog
    rel = [d for d in prog.decisions if d[0] == 'reload']
    assert len(rel) == 1 and rel[0][2]['loads'] == loads and rel[0][2]['live'] == 4, rel
    assert H.loaded_bytes(prog) == 8 * a[0].nbytes + 8 * w.nbytes, H.loaded_bytes(prog)
    rows = set(i.srcs[0][3][-1][1] for i in prog.ins if i.op == 'dma' and i.a.get('reload'))
    assert rows == {row}, rows
    assert prog.spill_save == 0 and prog.spill_reload == 0
    return k.last


def test_block_reloaded_when_double_buffers_do_not_fit():
    # 12 KiB per partition holds the live tiles (8 KiB block + 1 KiB row + two 1 KiB sums)
    # but not them double-buffered (14 KiB): the block is re-loaded, so w (1 MiB) is read
    # once per iteration; nothing spills. The two halves of a tile are read one after the
    # other: one load of the whole tile serves both (32 loads of 2 KiB rows, not 64 of 1)
    last = _reloaded(k_block, 'sbuf=12288', 32, 512)
    assert 'decision reload' in last.listing
    # the re-loads go on a queue of their own; with reload_queues=2 they alternate on two
    qs = set(i.a['q'].name for i in last.prog.ins if i.op == 'dma' and i.a.get('reload'))
    assert qs == {'qSyncReload0'}, qs
    last = _reloaded(k_block, 'sbuf=12288,reload_queues=2', 32, 512)
    qs = set(i.a['q'].name for i in last.prog.ins if i.op == 'dma' and i.a.get('reload'))
    assert qs == {'qSyncReload0', 'qSyncReload1'}, qs
    a, w = rnd(8, 128, 256), rnd(128, 2048)
    want = a + w.reshape(128, 8, 256).sum(1)[None]
    # with the target's SBUF the block stays resident: each byte loaded once
    k2 = nki.baremetal(k_block)
    H.close(k2(a, w), want, 1e-3, 1e-3, 'resident block')
    assert not [d for d in k2.last.prog.decisions if d[0] == 'reload']
    assert H.loaded_bytes(k2.last.prog) == a.nbytes + w.nbytes
    # live tiles that do not fit at all are the spill policy's (the pool), not re-loaded
    k3 = nki.baremetal(k_block, nx_policy='sbuf=10240')
    H.close(k3(a, w), want, 1e-3, 1e-3, 'pooled block')
    assert not [d for d in k3.last.prog.decisions if d[0] == 'reload']


@nki.jit
def k_block_halves(a, w):
    # k_block with its loops the other way round: the left halves of the four tiles, then
    # the right halves; each read depends on the one before (one running sum), so no two
    # reads of a tile can be brought together
    res = nl.ndarray((8, 128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    blk = [nl.load(w[:, t * 512:t * 512 + 512]) for t in range(4)]
    for r in nl.affine_range(8):
        s = nl.load(a[r])
        for h in range(2):
            for t in range(4):
                s = nl.add(s, blk[t][:, h * 256:h * 256 + 256])
        nl.store(res[r], value=s)
    return res


def test_block_reloaded_per_half_when_the_reads_cannot_meet():
    # 11 KiB: the live tiles (8 KiB block, 1 KiB row, two 1 KiB sums) fit, double-buffered
    # (12 KiB) they do not; each read loads just the half it reads
    _reloaded(k_block_halves, 'sbuf=11264', 64, 256)


def test_compile_options():
    lst = None
    k = nki.baremetal(k_add, additional_compile_opt='--target trn1 --disable-dge -O3')
    k(rnd(128, 64), rnd(128, 64))
    lst = k.last.listing
    assert 'target=trn1' in lst and 'dge=off' in lst, lst[:300]
    assert '-O3 ignored' in lst, 'the ignored option is not noted'
    H.raises(lambda: nki.baremetal(k_add, additional_compile_opt='--target trn9')(
        rnd(128, 64), rnd(128, 64)), 'expected trn1 or trn2')


if __name__ == '__main__':
    sys.exit(H.run(sys.modules[__name__]))
