"""test_loops.py: the iteration variables of every `for` of a kernel (nx_nki/loops.py). Plain
Python `range` loops and NKI ranges written in any form give `iter var=value@line` lines at
the user's `for`; tracebacks keep the user's lines; closures, defaults and inlined kernels
survive the rewrite; a kernel whose source cannot be read runs as it is. Each listing goes
through the real binary (kernel asm).
"""
import re
import sys
import traceback

import numpy as np

import harness as H
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt
from nx_nki import api, policy


def line_of(text):
    return H.line_of(__file__, text)


def listing(kernel, *args):
    pol = policy.make()
    pol.numerics = False
    res = api.run(kernel.fn, list(args), {}, (), pol, 'compile')
    return res.listing


def iters(text):
    """The listing's distinct `iter` lines, sorted (the schedule interleaves iterations)."""
    return sorted({line for line in text.split('\n') if line.startswith('iter')})


BF = nl.bfloat16


@nki.jit
def k_plain(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(2):                                     # plain-for-i
        for j in nl.affine_range(2):                       # affine-for-j
            r = (i * 2 + j) * 128
            nl.store(out[r:r + 128, :], value=nl.load(a[r:r + 128, :]))
    return out


def test_plain_range_has_iteration_variables():
    a = np.arange(512 * 8, dtype=np.float32).reshape(512, 8)
    H.close(nki.simulate_kernel(k_plain, a), a)
    li, lj = line_of('# plain-for-i'), line_of('# affine-for-j')
    got = iters(listing(k_plain, nt.tensor[[512, 8], BF]))
    want = ['iter i=%d@%d j=%d@%d' % (i, li, j, lj) for i in range(2) for j in range(2)]
    assert got == want, got


@nki.jit
def k_forms(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    steps = nl.sequential_range(2)                         # made-on-another-line
    for (k) in \
            steps:                                         # paren-for-k
        nl.store(out[k * 128:(k + 1) * 128, :], value=nl.load(a[k * 128:(k + 1) * 128, :]))
    for p, q in zip(range(1), range(1)):                   # tuple-target
        nl.store(out[0:128, :], value=nl.load(a[0:128, :]))
    return out


def test_nki_range_written_in_any_form():
    lk = line_of('# paren-for-k') - 1                      # the `for` starts a line above
    got = iters(listing(k_forms, nt.tensor[[256, 8], BF]))
    # the last store's loop has a tuple target: it iterates unchanged, no iteration variable
    assert got == ['iter', 'iter k=0@%d' % lk, 'iter k=1@%d' % lk], got


def make_scaled(times):
    @nki.jit
    def k_closure(a, n=2):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for i in range(n):                                 # closure-for-i
            nl.store(out[i * 128:(i + 1) * 128, :], value=nl.load(a[i * 128:(i + 1) * 128, :]))
        for t in range(times):
            if t == 1:
                raise ValueError('the user raised this')   # user-raise
        return out
    return k_closure


def test_closure_defaults_and_tracebacks_stay_the_users():
    li = line_of('# closure-for-i')
    got = iters(listing(make_scaled(1), nt.tensor[[256, 8], BF]))
    assert got[:2] == ['iter i=0@%d' % li, 'iter i=1@%d' % li], got
    try:
        nki.simulate_kernel(make_scaled(2), np.zeros((256, 8), np.float32))
    except ValueError as e:
        last = traceback.extract_tb(e.__traceback__)[-1]
        assert last.filename == __file__ and last.lineno == line_of('# user-raise'), last
        assert 'the user raised this' in str(e)
    else:
        raise AssertionError('the user\'s exception was lost')


@nki.jit
def k_inner(a, out, base):
    for j in range(2):                                     # inner-for-j
        r = base + j * 128
        nl.store(out[r:r + 128, :], value=nl.load(a[r:r + 128, :]))


@nki.jit
def k_outer(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):                           # outer-for-i
        k_inner(a, out, i * 256)
    return out


def test_inlined_kernel_loops():
    li, lj = line_of('# outer-for-i'), line_of('# inner-for-j')
    got = iters(listing(k_outer, nt.tensor[[512, 8], BF]))
    assert got == ['iter i=%d@%d j=%d@%d' % (i, li, j, lj) for i in range(2)
                   for j in range(2)], got


def test_unreadable_source_runs_as_is():
    ns = {'nl': nl}
    exec(compile('def k_exec(a):\n'
                 '    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n'
                 '    for i in range(2):\n'
                 '        nl.store(out[i * 128:(i + 1) * 128, :],\n'
                 '                 value=nl.load(a[i * 128:(i + 1) * 128, :]))\n'
                 '    return out\n', '<generated>', 'exec'), ns)
    k = nki.jit(ns['k_exec'])
    a = np.arange(256 * 8, dtype=np.float32).reshape(256, 8)
    H.close(nki.simulate_kernel(k, a), a)
    text = listing(k, nt.tensor[[256, 8], BF])
    assert not any(re.match(r'iter i=', line) for line in iters(text)), iters(text)


if __name__ == '__main__':
    sys.exit(H.run(sys.modules[__name__]))
