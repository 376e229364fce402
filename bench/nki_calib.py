"""nki_calib.py: one nki-calibration kernel through the shim the way its README describes
the measuring harness (called by bench/nki.sh; the folder is never copied):
inputs = transform_to_nki_inputs(get_inputs()) with numpy seed 42, then
nki.baremetal(kernel, save_neff_name, save_trace_name,
              additional_compile_opt='--disable-dge --logical-nc-config=1') on trn1,
numerics checked against the reference's forward, the simulated time against the
measured latency (measured.tsv).

    python3 nki_calib.py CALIBRATION_DIR NAME WORK_DIR [numerics=on|off]
"""
import csv
import importlib.util
import os
import sys
import time

import numpy as np


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def main():
    root, name, work = sys.argv[1], sys.argv[2], sys.argv[3]
    numerics = len(sys.argv) < 5 or sys.argv[4] != 'numerics=off'
    measured = {}
    with open(os.path.join(root, 'measured.tsv')) as f:
        for row in csv.DictReader(f, delimiter='\t'):
            measured[os.path.basename(row['kernel_file'])[:-len('_0.py')]] = row
    row = measured[name]
    ref = load(os.path.join(root, row['reference_file']), 'nki_calib_ref')
    ker = load(os.path.join(root, row['kernel_file']), 'nki_calib_kernel')
    import neuronxcc.nki as nki
    from nx_nki import tagged  # noqa: F401
    np.random.seed(42)
    inputs = ref.get_inputs()
    kin = ref.transform_to_nki_inputs(inputs)
    os.environ['NEURON_CC_FLAGS'] = '--auto-cast=none'
    opts = '--disable-dge --logical-nc-config=1 --target trn1'
    k = nki.baremetal(ker.kernel, save_neff_name=os.path.join(work, name + '.neff'),
                      save_trace_name=os.path.join(work, name + '.ntff'),
                      additional_compile_opt=opts,
                      nx_policy=None if numerics else 'numerics=off')
    t0 = time.perf_counter()
    out = k(*kin)
    wall = time.perf_counter() - t0
    res = k.last
    sim_ms = (res.sim_us or 0) / 1000.0
    meas_ms = float(row['latency'])
    line = ('%-40s %7d instr  record %6.1f s  compile %5.1f s  wall %6.1f s  simulated %8.3f '
            'ms  measured %8.3f ms  (%+.1f %%)' % (name, res.ninstr, res.record_s,
                                                  res.compile_s, wall, sim_ms, meas_ms,
                                                  100 * (sim_ms / meas_ms - 1)))
    prog = res.prog
    line += '  spill save/reload %.0f/%.0f MB (measured %.0f/%.0f MB)' % (
        prog.spill_save / 1e6, prog.spill_reload / 1e6,
        float(row['spill_save_bytes'] or 0) / 1e6, float(row['spill_reload_bytes'] or 0) / 1e6)
    if numerics:
        want = ref.forward(*inputs)
        got = ref.transform_nki_outputs(out, want)
        wants = want if isinstance(want, tuple) else (want,)
        errs = [float(np.max(np.abs(np.asarray(g, np.float64) - w))) for g, w in zip(got, wants)]
        ok = all(np.allclose(g, w, atol=1e-2, rtol=1e-2) for g, w in zip(got, wants))
        line += '  numerics %s (max abs error %s)' % ('match' if ok else 'DIFFER',
                                                     ', '.join('%.3g' % e for e in errs))
        print(line)
        return 0 if ok else 1
    print(line + '  numerics off')
    return 0


if __name__ == '__main__':
    sys.exit(main())
