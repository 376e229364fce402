"""test_psum_share.py: PSUM banks shared by allocation sites never live at the same time
(compiler.py `_share_banks`, docs/nki.md "Compiler decisions", `psum_share`). A kernel
whose first loop uses one PSUM site and whose second loop uses two: with sharing the first
site has all 8 banks and the two later ones 4 each, at the same addresses as the first's; with
`psum_share=off` the 8 banks are split over the three. Both listings assemble and simulate,
and the numbers stay numpy's (the policy's value: test_loop_order.py).
"""
import re
import sys

import numpy as np

import harness as H
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt
from nx_nki import api, policy

rng = np.random.default_rng(44)

N = 8                           # tiles a loop: more than the 8 banks can give each site


@nki.jit
def k_phases(x, y):
    """out[0, i] = x[i]^T y[i]; out[1, i] = x[i]^T (2 y[i]) + x[i]^T (3 y[i])."""
    out = nl.ndarray((2, N, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(N):
        xs = nl.load(x[i])
        ys = nl.load(y[i])
        p = nisa.nc_matmul(xs, ys)
        nl.store(out[0, i], value=nl.copy(p))
    for i in nl.affine_range(N):
        xs = nl.load(x[i])
        ys = nl.load(y[i])
        q = nisa.nc_matmul(xs, nl.multiply(ys, 2.0))
        r = nisa.nc_matmul(xs, nl.multiply(ys, 3.0))
        nl.store(out[1, i], value=nl.add(q, nl.copy(r)))
    return out


def inputs():
    return (rng.standard_normal((N, 128, 128)).astype(np.float32),
            rng.standard_normal((N, 128, 512)).astype(np.float32))


def listing(pol_text):
    pol = policy.make(nx_policy=pol_text)
    shapes = [nt.tensor[[N, 128, 128], nl.float32], nt.tensor[[N, 128, 512], nl.float32]]
    return api.run(k_phases.fn if hasattr(k_phases, 'fn') else k_phases, shapes, {}, (), pol,
                   'compile').listing


def psum_sites(text):
    """[(line, bufs, addr), ...] of the PSUM sites, in source order."""
    got = re.findall(r'^@(\d+) decision alloc buffer=\S+ mem=psum tiles=\d+ live=\d+ '
                     r'bufs=(\d+) bytes=2048 addr=(\d+)', text, re.M)
    return sorted((int(a), int(b), int(c)) for a, b, c in got)


def test_numbers_unchanged():
    x, y = inputs()
    got = nki.simulate_kernel(k_phases, x, y)
    mm = np.einsum('nkm,nkf->nmf', x.astype(np.float64), y.astype(np.float64))
    H.close(got, np.stack([mm, 5 * mm]), atol=1e-2, what='k_phases')


def test_banks_shared():
    on = psum_sites(listing(''))
    if [(b, a) for _, b, a in on] != [(8, 0), (4, 0), (4, 4 * 2048)]:
        raise AssertionError('PSUM sites with psum_share: %s' % on)
    off = psum_sites(listing('psum_share=off'))
    if len(off) != 3 or sum(b for _, b, _ in off) != 8 or len(set(a for _, _, a in off)) != 3:
        raise AssertionError('PSUM sites with psum_share=off: %s' % off)
    d = H.tmpdir()
    t_on = H.simulate(listing(''), d, 'shared')
    t_off = H.simulate(listing('psum_share=off'), d, 'split')
    if not (t_on > 0 and t_off > 0):
        raise AssertionError('simulated %.3f and %.3f us' % (t_on, t_off))


if __name__ == '__main__':
    sys.exit(H.run(sys.modules[__name__]))
