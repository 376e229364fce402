"""nki_stages.py: where the time of one `nki run` goes, stage by stage, in CPU seconds (called
by bench/nki.sh): the recording, the compile passes, the listing, `kernel asm` and `capture`.

    python3 nki_stages.py FILE ENTRY NAME=RxC[:dtype] ...

FILE is a kernel's .py, ENTRY its kernel function, then one placeholder input per
parameter (as `nki run --input`, numerics off). The Python stages are this process's CPU
time; `kernel asm` and `capture` are child processes, measured by their own CPU time
(user + system). The compile passes and the listing run with the cyclic garbage collector
off, as `nki run` runs them (api._pipeline): with it on, its walks over the trace's objects
cost ~40 % of the compile passes of the tiled matmul, which `nki run` never pays. On a loaded machine wall times say more about the neighbours than
about the pipeline, so none are printed.
"""
import importlib.util
import os
import resource
import subprocess
import sys
import tempfile
import time

import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt
from nx_nki import api, compiler, driver, emit, policy


def _child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _input(spec):
    name, _, rest = spec.partition('=')
    shape, _, dt = rest.partition(':')
    return name, nt.tensor[[int(x) for x in shape.split('x')], getattr(nl, dt or 'bfloat16')]


def main(path, entry, specs):
    spec = importlib.util.spec_from_file_location('nx_stages_kernel', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    k = getattr(mod, entry)
    fn = getattr(k, 'fn', k)
    kwargs = dict(_input(s) for s in specs)
    pol = policy.make()
    pol.numerics = False
    level = driver.level()
    c0 = time.process_time()
    tr, _ = api.trace_kernel(fn, (), kwargs, (), pol, False)
    c1 = time.process_time()
    with api._GcOff():
        prog = compiler.compile_trace(tr, pol)
        c2 = time.process_time()
        text = emit.listing(prog, level)
        c3 = time.process_time()
    n = len(tr.ins)
    with tempfile.TemporaryDirectory(prefix='nx-stages-') as d:
        lst = os.path.join(d, 'k.listing')
        with open(lst, 'w') as f:
            f.write(text)
        binary = driver.binary()
        a0 = _child_cpu()
        subprocess.run([binary, 'kernel', 'asm', lst, '-o', os.path.join(d, 'k.neff')],
                       check=True, stdout=subprocess.DEVNULL)
        a1 = _child_cpu()
        subprocess.run([binary, 'capture', '-n', os.path.join(d, 'k.neff'), '-s',
                        os.path.join(d, 'k.ntff'), '--target', pol.target, '-q'], check=True,
                       stdout=subprocess.DEVNULL)
        a2 = _child_cpu()
        size = os.path.getsize(lst) / 1e6
    stages = [('recording', c1 - c0), ('compile passes', c2 - c1), ('listing', c3 - c2),
              ('kernel asm (%.1f MB listing)' % size, a1 - a0), ('capture', a2 - a1)]
    total = sum(s for _, s in stages)
    print('%s: %d instructions, %.2f s CPU in all' % (entry, n, total))
    for name, s in stages:
        print('  %-32s %6.2f s CPU  %5.1f %%  %8.0f instructions/s'
              % (name, s, 100 * s / total, n / s if s > 0 else 0))


if __name__ == '__main__':
    if len(sys.argv) < 4:
        sys.stderr.write('usage: nki_stages.py FILE ENTRY NAME=RxC[:dtype] ...\n')
        sys.exit(2)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
