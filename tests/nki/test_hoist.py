"""test_hoist.py: the compiler rules that load less than the kernel source asks for:
loads served from a buffer that still holds their bytes (served.py, `serve_loads`). Each
kernel runs through the real binary (listing -> NEFF); numerics are checked against numpy
with the rules on and off, and the HBM bytes the compiled program loads are counted from
its DMAs.
"""
import sys

import numpy as np

import harness as H
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

rng = np.random.default_rng(43)


def rnd(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def loaded(prog):
    """HBM bytes the compiled program loads (its loads and re-loads; not spills)."""
    n = 0
    for ins in prog.ins:
        if ins.op == 'dma' and ins.a.get('kind') == 'load':
            v = ins.srcs[0]
            n += v[0].dtype.size * int(np.prod([c for _, c in v[3]]))
    return n


def decisions(prog, kind):
    return [d for d in prog.decisions if d[0] == kind]


@nki.jit
def k_twice(x):
    # rmsnorm's pattern: the same rows loaded again after a first pass over them
    out = nl.ndarray((4, 128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.load(x[i])
        s = nl.sum(nl.multiply(t, t), axis=[1])
        t2 = nl.load(x[i])
        nl.store(out[i], value=nl.multiply(t2, s))
    return out


def test_repeated_load_served_from_the_buffer_holding_it():
    x = rnd(4, 128, 256)
    want = x * (x * x).sum(2, keepdims=True)
    # the second load finds the first one's buffer still holding x[i]
    k = nki.baremetal(k_twice)
    H.close(k(x), want, 1e-3, 1e-3, 'served')
    prog = k.last.prog
    assert loaded(prog) == x.nbytes, loaded(prog)
    sv = decisions(prog, 'served')
    assert len(sv) == 1 and sv[0][2]['loads'] == 4 and sv[0][2]['bytes'] == x.nbytes, sv
    assert 'decision served' in k.last.listing
    k2 = nki.baremetal(k_twice, nx_policy='serve_loads=off')
    H.close(k2(x), want, 1e-3, 1e-3, 'not served')
    assert loaded(k2.last.prog) == 2 * x.nbytes


@nki.jit
def k_rewritten(x):
    # the same HBM rows loaded again after a store changed them: never served from SBUF
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    a = nl.load(out)
    nl.store(out, value=nl.add(a, 1.0))
    b = nl.load(out)
    nl.store(out, value=nl.multiply(b, 2.0))
    return out


def test_load_after_a_store_to_its_bytes_is_issued():
    x = rnd(128, 256)
    for pol in ('', 'serve_loads=off'):
        k = nki.baremetal(k_rewritten, nx_policy=pol or None)
        H.close(k(x), (x + 1.0) * 2.0, 1e-5, 1e-5, 'rewritten ' + pol)
        assert loaded(k.last.prog) == 3 * x.nbytes, (pol, loaded(k.last.prog))
        assert not decisions(k.last.prog, 'served')


def test_bad_policy_values():
    x = rnd(4, 128, 256)
    H.raises(lambda: nki.baremetal(k_twice, nx_policy='serve_loads')(x), 'expected key=value')
    try:
        nki.baremetal(k_twice, nx_policy='serve_load=on')(x)
    except Exception as e:
        assert 'serve_loads' in str(e), str(e)
    else:
        raise AssertionError('an unknown policy was accepted')


if __name__ == '__main__':
    sys.exit(H.run(sys.modules[__name__]))
