"""Calibration kernel (family A, "Opt 1", hoisted loads): BF16 matmul
[4096,8192] @ [8192,8192] on trn1 (measured 42.96 ms on one trn1.32xlarge NeuronCore).

The lhsT column strip is loaded once per m and the rhs strip once per (m, n). As in
the tutorial, the lhsT strip buffer is declared 512 wide although only 128 columns
are written: it reserves 64 KiB per partition.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_M = 128
TILE_K = 128
TILE_N = 512


@nki.jit
def calib_trn1_matmul_hoist(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        a_strip = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_N), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            a_strip[k, :, 0:TILE_M] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
        for n in nl.affine_range(N // TILE_N):
            b_strip = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                b_strip[k] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                acc += nisa.nc_matmul(a_strip[k, :, 0:TILE_M], b_strip[k])
            s = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=s)
    return result
