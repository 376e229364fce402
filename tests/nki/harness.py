"""harness.py: the small test runner of the NKI shim's tests (no pytest on the machines).

Each test is a function named test_*; a test passes when it returns without raising. The
run prints one line per test and closes with 'N passed, M failed'; the exit status is 1
when any failed; when none did, the folders tmpdir() made are removed. Kernels compile
through the real neuron-explorer binary (NX_NKI_BIN) and check their numerics against
numpy.
"""
import os
import shutil
import sys
import tempfile
import traceback

import numpy as np


# the folders tmpdir() made, removed by run() when every test passed
_made = []


def tmpdir():
    """A new folder of the test's own under $NX_TEST_TMP (or the system's temporary one)."""
    base = os.environ.get('NX_TEST_TMP') or tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    d = tempfile.mkdtemp(prefix='nki-', dir=base)
    _made.append(d)
    return d


def close(got, want, atol=1e-3, rtol=1e-3, what=''):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        raise AssertionError('%s: shape %s, expected %s' % (what, got.shape, want.shape))
    if not np.allclose(got, want, atol=atol, rtol=rtol):
        err = np.max(np.abs(got - want))
        raise AssertionError('%s: max abs error %g (atol %g, rtol %g)' % (what, err, atol, rtol))


def line_of(path, text):
    """The line of file `path` where `text` first stands (to check a source line the shim
    reports)."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise AssertionError('no line of %s holds %r' % (path, text))


def loaded_bytes(prog):
    """HBM bytes a compiled program loads (its loads and the compiler's re-loads; not the
    spills)."""
    n = 0
    for ins in prog.ins:
        if ins.op == 'dma' and ins.a.get('kind') == 'load':
            v = ins.srcs[0]
            n += v[0].dtype.size * int(np.prod([c for _, c in v[3]]))
    return n


def raises(fn, needle, exc=None):
    """fn() must raise an NkiError whose message contains needle; returns the error."""
    from nx_nki.errors import NkiError
    try:
        fn()
    except NkiError as e:
        if needle not in str(e):
            raise AssertionError('error %r does not mention %r' % (str(e), needle))
        return e
    raise AssertionError('no error (expected one mentioning %r)' % needle)


def simulate(listing_text, d, tag):
    """Assembles a listing with the real binary (`kernel asm`) in folder d and simulates it
    on trn2; returns the simulated microseconds."""
    import subprocess
    from nx_nki import driver
    lst = os.path.join(d, tag + '.listing')
    with open(lst, 'w') as f:
        f.write(listing_text)
    neff = os.path.join(d, tag + '.neff')
    subprocess.run([driver.binary(), 'kernel', 'asm', lst, '-o', neff], check=True)
    return driver.capture(neff, os.path.join(d, tag + '.ntff'), 'trn2')


def run(mod):
    names = sorted(n for n in dir(mod) if n.startswith('test_'))
    only = os.environ.get('NX_NKI_TEST')
    passed = failed = 0
    for n in names:
        if only and only not in n:
            continue
        try:
            getattr(mod, n)()
        except Exception:
            failed += 1
            print('FAIL %s' % n)
            traceback.print_exc(file=sys.stdout)
        else:
            passed += 1
            print('ok   %s' % n)
        sys.stdout.flush()
    print('%d passed, %d failed' % (passed, failed))
    if not failed:
        for d in _made:
            shutil.rmtree(d, ignore_errors=True)
    return 1 if failed else 0
