"""run.py: `neuron-explorer nki run` (the binary runs `python3 -m nx_nki.run ARGS`).

Loads the user's file (its `__main__` block does not run), makes seeded random inputs of
the given shapes and dtypes, runs the entry kernel through the shim, writes the NEFF and
the simulated NTFF and, with --display-name, ingests the profile. Exit status: 0 done,
1 the kernel or a pipeline step failed (one line naming FILE:LINE and the API call), 2 a
usage error.
"""
import argparse
import ast
import os
import sys
import time
import traceback

import numpy as np

from . import api
from . import dtypes as D
from . import driver
from . import errors
from . import policy as P

USAGE = 'neuron-explorer nki run FILE --entry NAME --input NAME=SHAPE[:DTYPE] ... [options]'


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write('neuron-explorer nki run: %s\n' % message)
        sys.stderr.write('usage: %s\n' % USAGE)
        sys.exit(2)


def _parser():
    p = _Parser(prog='neuron-explorer nki run', usage=USAGE, add_help=False)
    p.add_argument('file')
    p.add_argument('--entry', required=True)
    p.add_argument('--input', action='append', default=[])
    p.add_argument('--arg', action='append', default=[])
    p.add_argument('--grid', default=None)
    p.add_argument('--target', choices=('trn1', 'trn2'), default=None)
    p.add_argument('-n', '--neff', default=None)
    p.add_argument('-s', '--session-file', dest='ntff', default=None)
    p.add_argument('--data-path', default=None)
    p.add_argument('--display-name', default=None)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--numerics', action='store_true')
    p.add_argument('--policy', default=None)
    p.add_argument('--compile-opt', default=None)
    p.add_argument('--listing', default=None)
    p.add_argument('-q', '--quiet', action='store_true')
    return p


def _usage(msg):
    sys.stderr.write('neuron-explorer nki run: %s\n' % msg)
    sys.exit(2)


def parse_input(spec):
    """NAME=D0xD1[:DTYPE] -> (name, shape, dtype)."""
    if '=' not in spec:
        _usage("--input '%s': expected NAME=SHAPE[:DTYPE], e.g. a=4096x8192:bfloat16" % spec)
    name, rest = spec.split('=', 1)
    dt = 'float32'
    if ':' in rest:
        rest, dt = rest.split(':', 1)
    try:
        shape = tuple(int(x) for x in rest.lower().split('x'))
        if not shape or any(s <= 0 for s in shape):
            raise ValueError
    except ValueError:
        _usage("--input '%s': bad shape '%s' (dims joined by x, e.g. 128x512)" % (spec, rest))
    try:
        d = D.as_dtype(dt)
    except TypeError:
        _usage("--input '%s': unknown dtype '%s' (bfloat16, float16, float32, int32, ...)"
               % (spec, dt))
    return name.strip(), shape, d


def make_input(rng, shape, d, numerics):
    if not numerics:
        return api.Placeholder(shape, d)
    if d.kind == 'f':
        a = rng.standard_normal(shape, dtype=np.float32)
        return D.tagged(a, d) if d.np_out is np.float32 and d is not D.float32 and \
            d is not D.tfloat32 else a.astype(d.np_out)
    return rng.integers(0, 16, size=shape).astype(d.np_out)


def load_module(path):
    """Runs the user's file as a module named __nki_run__ (not __main__)."""
    import types
    try:
        with open(path, 'rb') as f:
            src = f.read()
    except OSError as e:
        raise errors.NkiError('cannot read %s: %s' % (path, e.strerror))
    try:
        code = compile(src, path, 'exec')
    except SyntaxError as e:
        raise errors.NkiError('syntax error: %s' % e.msg,
                              where='%s:%s' % (path, e.lineno or 0)) from None
    mod = types.ModuleType('__nki_run__')
    mod.__file__ = path
    sys.modules['__nki_run__'] = mod
    sys.path.insert(0, os.path.dirname(path))
    exec(code, mod.__dict__)
    return mod


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    path = os.path.abspath(args.file)
    if not os.path.isfile(path):
        _usage("'%s' is not a file" % args.file)
    if args.data_path and not args.display_name:
        _usage('--data-path needs --display-name (the name to ingest the profile under)')
    inputs = [parse_input(s) for s in args.input]
    extra = {}
    for s in args.arg:
        if '=' not in s:
            _usage("--arg '%s': expected NAME=VALUE (a Python literal)" % s)
        k, v = s.split('=', 1)
        try:
            extra[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            _usage("--arg '%s': the value is not a Python literal" % s)
    grid = ()
    if args.grid:
        try:
            grid = tuple(int(x) for x in args.grid.split('x'))
        except ValueError:
            _usage("--grid '%s': expected N or NxM" % args.grid)
    try:
        pol = P.make(args.compile_opt, args.policy, args.target)
    except ValueError as e:
        _usage(str(e))
    pol.numerics = args.numerics
    try:
        mod = load_module(path)
        fn = getattr(mod, args.entry, None)
        if fn is None:
            raise errors.NkiError("no function '%s' in %s" % (args.entry, path))
        if isinstance(fn, api.Kernel):
            grid = grid or fn.grid
            fn = fn.fn
        if not callable(fn):
            raise errors.NkiError("'%s' in %s is not a function" % (args.entry, path))
        import inspect
        params = list(inspect.signature(fn).parameters.values())
        rng = np.random.default_rng(args.seed)
        given = {n: (s, d) for n, s, d in inputs}
        call = []
        kw = {}
        for prm in params:
            if prm.name in given:
                s, d = given.pop(prm.name)
                v = make_input(rng, s, d, pol.numerics)
            elif prm.name in extra:
                v = extra.pop(prm.name)
            elif prm.default is not inspect.Parameter.empty:
                continue
            elif prm.kind in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD):
                continue
            else:
                _usage("kernel parameter '%s' has no --input (or --arg)" % prm.name)
            if prm.kind == prm.KEYWORD_ONLY:
                kw[prm.name] = v
            else:
                call.append(v)
        if given or extra:
            _usage("no kernel parameter named %s" % ', '.join(sorted(list(given) + list(extra))))
        base = args.entry
        neff = os.path.abspath(args.neff or base + '.neff')
        ntff = os.path.abspath(args.ntff or base + '.ntff')
        why = driver.output_refusal(args.neff or base + '.neff', args.listing)  # as given
        if why:
            _usage(why)
        t0 = time.perf_counter()
        res = api.run(fn, call, kw, grid, pol, 'capture', neff, ntff, name=args.entry,
                      keep_program=False, listing_out=args.listing)
        wall = time.perf_counter() - t0
        if not args.quiet:
            print('nki run: %s: %d instructions recorded in %.2f s, compiled in %.2f s; %.3f us '
                  'simulated on %s; wrote %s and %s (%.2f s in all)'
                  % (args.entry, res.ninstr, res.record_s, res.compile_s, res.sim_us or 0.0,
                     pol.target, neff, ntff, wall))
            for loc, text in res.prog.trace.notes:
                print('note: %s%s' % (('%s:%d: ' % loc) if loc else '', text))
        if res.ninstr == 0:
            sys.stderr.write('warning: %s made no NKI call (no load, store or compute), so its '
                             'profile is empty: is it the kernel, and does it use nki.language '
                             'or nki.isa?\n' % args.entry)
        if args.display_name:
            driver.ingest(neff, ntff, args.data_path, args.display_name)
            if not args.quiet:
                print('nki run: ingested as %s' % args.display_name)
    except errors.NkiError as e:
        sys.stderr.write('error: %s\n' % e)
        return 1
    except SystemExit:
        raise
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            return 130
        tb = errors.cut_traceback(e)
        traceback.print_exception(type(e), e, tb.__traceback__)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
