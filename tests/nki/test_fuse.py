"""test_fuse.py: the compiler's rewrite of x op (c * x) into one single-input operation
(fuse.py, docs/nki.md "Compiler decisions"): the listing the real binary assembles and
simulates has the rewritten operations and the `fuse` decisions, the kernel's numbers stay
numpy's, and the forms it must not touch (the scaled copy read twice, a negative c in a
product, a two-operation tensor_scalar, `fuse=off`) keep their tensor_tensors.
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

rng = np.random.default_rng(11)


@nki.jit
def k_fusable(a):
    """x - 0.25x, 0.5x + x, 0.5x - x and x * 0.01x: four rewrites."""
    out = nl.ndarray((4,) + tuple(a.shape), dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    s1 = nisa.tensor_scalar(data=x, op0=nl.multiply, operand0=0.25)
    nl.store(out[0], value=nl.subtract(x, s1))
    s2 = nisa.tensor_scalar(data=x, op0=nl.multiply, operand0=0.5)
    nl.store(out[1], value=nisa.tensor_tensor(s2, x, nl.add))
    s3 = nisa.tensor_scalar(data=x, op0=nl.multiply, operand0=0.5)
    nl.store(out[2], value=nisa.tensor_tensor(s3, x, nl.subtract))
    s4 = nisa.tensor_scalar(data=x, op0=nl.multiply, operand0=0.01)
    nl.store(out[3], value=nl.multiply(x, s4))
    return out


@nki.jit
def k_kept(a):
    """No rewrite: the scaled copy also stored, a negative scale in a product, a
    two-operation tensor_scalar, a scaled copy of another tile, and a tensor_tensor the
    kernel puts on GpSimd."""
    out = nl.ndarray((6,) + tuple(a.shape), dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(a)
    s1 = nisa.tensor_scalar(data=x, op0=nl.multiply, operand0=0.25)
    nl.store(out[0], value=nl.subtract(x, s1))
    nl.store(out[1], value=s1)
    s2 = nisa.tensor_scalar(data=x, op0=nl.multiply, operand0=-0.5)
    nl.store(out[2], value=nl.multiply(x, s2))
    s3 = nisa.tensor_scalar(data=x, op0=nl.multiply, operand0=0.5, op1=nl.add, operand1=1.0)
    nl.store(out[3], value=nl.add(x, s3))
    s4 = nisa.tensor_scalar(data=y, op0=nl.multiply, operand0=0.5)
    nl.store(out[4], value=nl.add(x, s4))
    s5 = nisa.tensor_scalar(data=x, op0=nl.multiply, operand0=0.5)
    nl.store(out[5], value=nisa.tensor_tensor(x, s5, nl.add, engine=nisa.gpsimd_engine))
    return out


def listing(kernel, a, pol_text=''):
    pol = policy.make(nx_policy=pol_text)
    res = api.run(kernel.fn if hasattr(kernel, 'fn') else kernel,
                  [nt.tensor[list(a.shape), nl.float32]], {}, (), pol, 'compile')
    return res.listing


def ops(text):
    return re.findall(r'^@\d+ (?:Vector|Scalar|GpSimd) (\w+)(?: act=(\w+))?', text, re.M)


def assemble(text, tag):
    """The listing assembles into a NEFF and simulates (the real binary)."""
    return H.simulate(text, H.tmpdir(), tag)


def test_rewrites_numbers_unchanged():
    a = rng.standard_normal((128, 512)).astype(np.float32)
    got = nki.simulate_kernel(k_fusable, a)
    want = np.stack([a - 0.25 * a, 0.5 * a + a, 0.5 * a - a, a * (0.01 * a)])
    H.close(got, want, what='k_fusable')


def test_rewrites_in_listing():
    a = np.zeros((128, 512), np.float32)
    text = listing(k_fusable, a)
    o = ops(text)
    if any(op == 'tensor_tensor' for op, _ in o):
        raise AssertionError('a tensor_tensor left: %s' % o)
    if o.count(('activate', 'square')) != 1:
        raise AssertionError('expected one square activation: %s' % o)
    if sum(1 for op, _ in o if op == 'tensor_scalar') != 3:
        raise AssertionError('expected three tensor_scalars (one per add/subtract): %s' % o)
    fused = re.findall(r'decision fuse op=tensor_tensor into=(\w+) count=1', text)
    if sorted(fused) != ['activation', 'tensor_scalar', 'tensor_scalar', 'tensor_scalar']:
        raise AssertionError('fuse decisions: %s' % fused)
    for k in ('imm=0.75', 'imm=1.5', 'imm=-0.5', 'scale=0.1'):
        if k not in text.replace('operand0=', 'imm='):
            raise AssertionError('%s not in the listing' % k)
    t_on = assemble(text, 'fused')
    t_off = assemble(listing(k_fusable, a, 'fuse=off'), 'unfused')
    if not t_on < t_off:
        raise AssertionError('rewritten %.3f us, not below the original %.3f us'
                             % (t_on, t_off))


def test_forms_kept():
    a = rng.standard_normal((128, 512)).astype(np.float32)
    got = nki.simulate_kernel(k_kept, a)
    want = np.stack([a - 0.25 * a, 0.25 * a, a * (-0.5 * a), a + (0.5 * a + 1), a + 0.5 * a,
                     a + 0.5 * a])
    H.close(got, want, what='k_kept')
    text = listing(k_kept, a)
    if 'decision fuse' in text:
        raise AssertionError('fused: %s' % re.findall(r'.*decision fuse.*', text))
    if sum(1 for op, _ in ops(text) if op == 'tensor_tensor') != 5:
        raise AssertionError('expected five tensor_tensors: %s' % ops(text))
    assemble(text, 'kept')


def test_fuse_off():
    a = np.zeros((128, 512), np.float32)
    text = listing(k_fusable, a, 'fuse=off')
    if 'decision fuse' in text or sum(1 for op, _ in ops(text) if op == 'tensor_tensor') != 4:
        raise AssertionError('fuse=off rewrote: %s' % ops(text))
    try:
        policy.make(nx_policy='bogus=1')
    except ValueError as e:
        if 'fuse' not in str(e):
            raise AssertionError('unknown-policy message does not list fuse: %s' % e)
    else:
        raise AssertionError('bogus=1 accepted')


def test_policy_values_refused():
    # a switch takes on/off (1/0, true/false, yes/no) and a count an integer of at least 1:
    # anything else is an error naming the value and the policy, never a silent default
    for item, value, key in (('fuse=maybe', 'maybe', 'fuse'), ('hoist=2', '2', 'hoist'),
                             ('bufs=0', '0', 'bufs'), ('spill_ahead=-1', '-1', 'spill_ahead'),
                             ('queues=two', 'two', 'queues'), ('sbuf=0', '0', 'sbuf'),
                             ('bufs@12=0', '0', 'bufs@12')):
        try:
            policy.make(nx_policy=item)
        except ValueError as e:
            want = "nx_policy: bad value '%s' for %s" % (value, key)
            if str(e) != want:
                raise AssertionError('%s: %r, expected %r' % (item, str(e), want))
        else:
            raise AssertionError('%s accepted' % item)
    pol = policy.make(nx_policy='fuse=OFF,hoist=no,serve_loads=1,bufs=2,spill_ahead=3')
    if (pol.fuse, pol.hoist, pol.serve_loads, pol.bufs, pol.spill_ahead) != (False, False, True,
                                                                             2, 3):
        raise AssertionError('accepted values read wrong: %r' % vars(pol))


if __name__ == '__main__':
    sys.exit(H.run(sys.modules[__name__]))
