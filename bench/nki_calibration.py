#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nki_calibration.py REF WORK OUT BIN: runs the NKI calibration kernels of
REF/nki-calibration through our NKI front-end the way their measurement harness did,
and writes the simulated Summary of each to OUT (a TSV that bench_calib --nki-results
reads; bench/calibration.sh calls this). WORK must not exist yet: it is created and
keeps each kernel's NEFF and NTFF.

For each row of REF/nki-calibration/measured.tsv: numpy seed 42, inputs =
transform_to_nki_inputs(get_inputs()) of its reference file, then
nki.baremetal(kernel, save_neff_name=..., save_trace_name=...,
additional_compile_opt="--disable-dge --logical-nc-config=1")(*inputs) on trn1
(NEURON_CC_FLAGS=--auto-cast=none; --target trn1 added to the compile options), then
`BIN view --output-format summary-json`.
Each kernel runs in its own Python process so that one failure names its kernel and
stops nothing else. PYTHONPATH must hold the front-end (`BIN nki path`). The kernels
are read from REF at run time, never copied."""
import csv
import importlib.util
import json
import os
import subprocess
import sys

FIELDS = ["total_time", "hbm_read_bytes", "hbm_write_bytes", "spill_reload_bytes",
          "spill_save_bytes", "scalar_engine_active_time_percent",
          "vector_engine_active_time_percent", "gpsimd_engine_active_time_percent"]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_one(folder, kernel_file, reference_file, neff, ntff):
    """Runs one kernel in this process (the child side). The harness's options, plus
    --target trn1 (it ran on a trn1; our front-end compiles for trn2 unless told), and
    numerics off when the front-end takes that policy (the times do not need them)."""
    import numpy as np
    import neuronxcc.nki as nki
    ref = load(os.path.join(folder, reference_file), "nx_calib_reference")
    ker = load(os.path.join(folder, kernel_file), "nx_calib_kernel")
    np.random.seed(42)
    inputs = ref.transform_to_nki_inputs(ref.get_inputs())
    os.environ["NEURON_CC_FLAGS"] = "--auto-cast=none"
    kw = dict(save_neff_name=neff, save_trace_name=ntff,
              additional_compile_opt="--disable-dge --logical-nc-config=1 --target trn1")
    try:
        run = nki.baremetal(ker.kernel, nx_policy="numerics=off", **kw)
    except TypeError:
        run = nki.baremetal(ker.kernel, **kw)
    run(*inputs)


def first_line(text):
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return (lines[-1] if lines else "failed without a message").replace("\t", " ")[:300]


def main(argv):
    if len(argv) == 7 and argv[1] == "--one":
        run_one(*argv[2:])
        return 0
    if len(argv) != 5:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    ref, work, out, binary = argv[1:]
    folder = os.path.join(ref, "nki-calibration")
    measured = os.path.join(folder, "measured.tsv")
    if os.path.lexists(work):  # a fresh folder: nothing of anyone else's is overwritten
        print("nki_calibration.py: %s exists; give a folder that does not" % work,
              file=sys.stderr)
        return 2
    os.mkdir(work)
    env = dict(os.environ, NEURON_PLATFORM_TARGET_OVERRIDE="trn1")
    env.setdefault("NX_NKI_POLICY", "numerics=off")
    rows = []
    with open(measured, newline="") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            name = r["problem"]
            neff = os.path.join(work, name + ".neff")
            ntff = os.path.join(work, name + ".ntff")
            print("nki_calibration: %s" % name, file=sys.stderr, flush=True)
            status, summary = "ok", {}
            run = subprocess.run([sys.executable, argv[0], "--one", folder, r["kernel_file"],
                                  r["reference_file"], neff, ntff], env=env,
                                 capture_output=True, text=True)
            if run.returncode:
                status = "kernel run: " + first_line(run.stderr)
            else:
                view = subprocess.run([binary, "view", "--output-format", "summary-json",
                                       "-n", neff, "-s", ntff], capture_output=True, text=True)
                if view.returncode:
                    status = "view: " + first_line(view.stderr)
                else:
                    summary = json.loads(view.stdout)
                    if isinstance(summary, list):
                        summary = summary[0]
                    # {"<profile>": {Summary fields}}: the one profile's fields
                    if "total_time" not in summary and len(summary) == 1:
                        summary = next(iter(summary.values()))
            rows.append([name, status] + [str(summary.get(k, "")) for k in FIELDS])
    tmp = out + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as f:
        f.write("\t".join(["problem", "status"] + FIELDS) + "\n")
        for row in rows:
            f.write("\t".join(row) + "\n")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
