"""nki_rate.py: the NKI shim's own cost (called by bench/nki.sh): recorded instructions per
second with numerics off and on, and the compile (policies + listing) rate, on a tiled
matmul kernel written here (loads, matmuls with PSUM accumulation, copies, stores).

    python3 nki_rate.py [K]      # K: the matmul's contraction size (default 8192)
"""
import sys
import time

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt
from nx_nki import api, compiler, driver, emit, policy


@nki.jit
def tiled(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                b = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                acc += nisa.nc_matmul(a, b)
            nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512],
                     value=nl.copy(acc, dtype=out.dtype))
    return out


def measure(K, numerics):
    pol = policy.make()
    pol.numerics = numerics
    if numerics:
        args = (np.ones((K, 512), np.float32), np.ones((K, 1024), np.float32))
    else:
        args = (nt.tensor[[K, 1024], nl.bfloat16], nt.tensor[[K, 2048], nl.bfloat16])
    t0 = time.perf_counter()
    tr, _ = api.trace_kernel(tiled.fn, args, {}, (), pol, numerics)
    t1 = time.perf_counter()
    prog = compiler.compile_trace(tr, pol)
    t2 = time.perf_counter()
    text = emit.listing(prog, driver.level())
    t3 = time.perf_counter()
    n = len(tr.ins)
    print('numerics %-3s: %7d instructions recorded in %6.2f s = %8.0f instructions/s; '
          'compiled in %.2f s (%.0f/s), listing %.2f s (%d lines)'
          % ('on' if numerics else 'off', n, t1 - t0, n / (t1 - t0), t2 - t1, n / (t2 - t1),
             t3 - t2, text.count('\n')))


if __name__ == '__main__':
    K = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    measure(K, False)
    measure(max(128, K // 16), True)
