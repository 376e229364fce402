"""nki_rate.py: the NKI shim's own cost (called by bench/nki.sh): recorded instructions per
second with numerics off and on, and the compile (policies + listing) rate, on a tiled
matmul kernel written here (loads, matmuls with PSUM accumulation, copies, stores).

    python3 nki_rate.py [K]              # K: the matmul's contraction size (default 8192)
    python3 nki_rate.py --record-only K  # one line: the recording's CPU time (nki_ab.sh)

Rates are per second of this process's CPU time (wall time, on a loaded machine, says more
about the neighbours than about the shim); each figure is one cold recording in a process
that has recorded only a small warm-up kernel before, as `nki run` does. The compile
passes and the listing run with the cyclic GC off, as in `nki run`.
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


def _args(K, numerics):
    if numerics:
        return (np.ones((K, 512), np.float32), np.ones((K, 1024), np.float32))
    return (nt.tensor[[K, 1024], nl.bfloat16], nt.tensor[[K, 2048], nl.bfloat16])


def _record(K, numerics, pol):
    c0 = time.process_time()
    tr, _ = api.trace_kernel(tiled.fn, _args(K, numerics), {}, (), pol, numerics)
    return tr, time.process_time() - c0


def _policy(numerics):
    pol = policy.make()
    pol.numerics = numerics
    return pol


def measure(K, numerics):
    pol = _policy(numerics)
    _record(128, numerics, pol)                 # warm-up: imports, first-call caches
    tr, rec = _record(K, numerics, pol)
    c1 = time.process_time()
    with api._GcOff():                          # as nki run compiles (api._pipeline)
        prog = compiler.compile_trace(tr, pol)
        c2 = time.process_time()
        text = emit.listing(prog, driver.level())
        c3 = time.process_time()
    n = len(tr.ins)
    print('numerics %-3s: %7d instructions recorded in %6.2f s CPU = %8.0f instructions/s; '
          'compiled in %.2f s (%.0f/s), listing %.2f s (%d lines)'
          % ('on' if numerics else 'off', n, rec, n / rec, c2 - c1, n / (c2 - c1),
             c3 - c2, text.count('\n')))


def record_only(K):
    pol = _policy(False)
    _record(128, False, pol)
    tr, rec = _record(K, False, pol)
    print('%d %.6f' % (len(tr.ins), rec))


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--record-only':
        record_only(int(sys.argv[2]) if len(sys.argv) > 2 else 32768)
        sys.exit(0)
    K = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    measure(K, False)
    measure(max(128, K // 16), True)
