"""test_loop_order.py: the compiler's order of a perfect nest of affine_range loops
(interchange.py, docs/nki.md "Compiler decisions"). On a kernel whose inner loop walks a block
of tiles that does not fit SBUF beside the outer loop's tile, the listing runs the loops the
other way round (a `loop_order` decision), reloads fewer spilled bytes than the source order
(`loop_order=source`), and both listings assemble and simulate; the numbers stay numpy's; a
nest whose tiles fit, a sequential_range nest and a nest carrying a value between iterations
keep the source order.
"""
import re
import sys

import numpy as np

import harness as H
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt
from nx_nki import api, policy

rng = np.random.default_rng(43)

NQ, NK, F = 8, 4, 512           # 8 q tiles and 4 k tiles of 2 KiB a partition
SMALL = 'sbuf=16384'            # 16 KiB a partition: the 24 KiB of q and k do not fit


def load_blocks(q, k):
    """q and k loaded into SBUF blocks of NQ and NK tiles (called by the kernels)."""
    qs = nl.ndarray((NQ, nl.par_dim(128), F), dtype=q.dtype, buffer=nl.sbuf)
    ks = nl.ndarray((NK, nl.par_dim(128), F), dtype=q.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(NQ):
        qs[j] = nl.load(q[j])
    for i in nl.affine_range(NK):
        ks[i] = nl.load(k[i])
    return qs, ks


def products(loop):
    """out[i, j] = q[j] * k[i] with loops of kind `loop`: the j loop inside re-reads every q
    tile per k tile (affine_range: the compiler may turn the nest round; sequential_range:
    the order is the user's)."""
    @nki.jit
    def kernel(q, k):
        out = nl.ndarray((NK, NQ, 128, F), dtype=q.dtype, buffer=nl.shared_hbm)
        qs, ks = load_blocks(q, k)
        for i in loop(NK):
            for j in loop(NQ):
                nl.store(out[i, j], value=nl.multiply(qs[j], ks[i]))
        return out
    return kernel


k_products = products(nl.affine_range)
k_sequential = products(nl.sequential_range)


@nki.jit
def k_carried(q, k):
    """An iteration reads the count the previous j wrote (not an accumulation): kept."""
    out = nl.ndarray((NK, NQ, 128, F), dtype=q.dtype, buffer=nl.shared_hbm)
    qs, ks = load_blocks(q, k)
    count = nl.zeros((NK, NQ, nl.par_dim(128), 1), dtype=q.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(NK):
        for j in nl.affine_range(NQ):
            nl.store(out[i, j], value=nl.multiply(qs[j], ks[i]))
            count[i, j] = nl.add(count[i, max(j - 1, 0)], 1.0)
    return out


def inputs():
    return (rng.standard_normal((NQ, 128, F)).astype(np.float32),
            rng.standard_normal((NK, 128, F)).astype(np.float32))


def listing(kernel, pol_text):
    pol = policy.make(nx_policy=pol_text)
    shapes = [nt.tensor[[NQ, 128, F], nl.float32], nt.tensor[[NK, 128, F], nl.float32]]
    res = api.run(kernel.fn if hasattr(kernel, 'fn') else kernel, shapes, {}, (), pol,
                  'compile')
    return res.listing


def reloads(text):
    m = re.search(r'decision spill save_bytes=(\d+) reload_bytes=(\d+)', text)
    return int(m.group(2)) if m else 0


def orders(text):
    return re.findall(r'decision loop_order order=(\S+) bands=(\d+)', text)


def test_numbers_unchanged():
    q, k = inputs()
    got = nki.simulate_kernel(k_products, q, k)
    H.close(got, k[:, None] * q[None, :], what='k_products')


def test_nest_reordered():
    text = listing(k_products, SMALL)
    o = orders(text)
    if len(o) != 1 or not re.fullmatch(r'j@\d+,i@\d+', o[0][0]) or o[0][1] != '1':
        raise AssertionError('expected one loop_order decision j, i: %s' % o)
    src = listing(k_products, SMALL + ',loop_order=source')
    if orders(src):
        raise AssertionError('loop_order=source reordered: %s' % orders(src))
    if not reloads(text) < reloads(src):
        raise AssertionError('reloads %d with the chosen order, not below the source '
                             "order's %d" % (reloads(text), reloads(src)))
    d = H.tmpdir()
    H.simulate(text, d, 'reuse')
    H.simulate(src, d, 'source')


def test_nests_kept():
    for kernel, pol_text, what in ((k_products, '', 'tiles that fit'),
                                   (k_sequential, SMALL, 'sequential_range'),
                                   (k_carried, SMALL, 'a carried value')):
        text = listing(kernel, pol_text)
        if orders(text):
            raise AssertionError('%s: reordered: %s' % (what, orders(text)))


def test_policy_values():
    pol = policy.make()
    if (pol.loop_order, pol.psum_share) != ('reuse', True):
        raise AssertionError('defaults: loop_order=%s psum_share=%s'
                             % (pol.loop_order, pol.psum_share))
    for key, value in (('loop_order', 'inner'), ('psum_share', 'some')):
        try:
            policy.make(nx_policy='%s=%s' % (key, value))
        except ValueError as e:
            if str(e) != "nx_policy: bad value '%s' for %s" % (value, key):
                raise AssertionError('%s=%s: %r' % (key, value, str(e)))
        else:
            raise AssertionError('%s=%s accepted' % (key, value))


if __name__ == '__main__':
    sys.exit(H.run(sys.modules[__name__]))
