"""driver.py: runs the neuron-explorer binary for the shim: `kernel asm` (listing -> NEFF,
carrying the kernel's source file), `capture` (NEFF -> simulated NTFF) and `view` (summary
JSON, ingest).

The binary is the one whose `nki path` the user put on PYTHONPATH: NX_NKI_BIN when set (the
`nki run` command sets it), else the binary beside these packages (the build tree's
build/neuron-explorer, or PREFIX/bin/neuron-explorer when installed). Errors of a step are
NkiErrors that name the user's file:line when the listing points there.
"""
import os
import re
import subprocess
import tempfile

from . import errors

_HERE = os.path.dirname(os.path.abspath(__file__))
_level_cache = {}
# What a NEFF's kernel sources may be (src/neff/neff.h: NX_NEFF_SOURCE_MAX, in all,
# NX_NEFF_SOURCE_FILES_MAX, NX_NEFF_SOURCE_NAME_MAX): `kernel asm --attach-source`
# refuses anything else.
SOURCE_MAX = 1 << 20
SOURCE_FILES_MAX = 64
SOURCE_NAME_MAX = 85


def binary():
    b = os.environ.get('NX_NKI_BIN')
    if b:
        return b
    for rel in (('..', '..', '..', 'neuron-explorer'),
                ('..', '..', '..', '..', '..', 'bin', 'neuron-explorer')):
        p = os.path.normpath(os.path.join(_HERE, *rel))
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    raise errors.NkiError('cannot find the neuron-explorer binary next to the NKI shim (%s); set '
                          'NX_NKI_BIN' % _HERE)


def _run(args, what, listing=None):
    """Runs a step; a failure is an NkiError naming the user's line (from the listing's
    text, split into lines only then)."""
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise errors.NkiError('%s: cannot run %s: %s' % (what, args[0], e)) from None
    if p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip() or 'exit status %d' % p.returncode)
        lines = listing.split('\n') if listing is not None else None
        raise errors.NkiError('%s failed: %s' % (what, _locate(msg, lines)),
                              where=_where_of(msg, lines))
    return p


def _where_of(msg, lines):
    """The user's FILE:LINE of a failing step: the simulator names it (' at FILE:LINE'); an
    assembler error names a listing line, whose @FILE:LINE or @LINE (of the `source`
    file) points at the user's code."""
    m = re.search(r' at (\S+:\d+)', msg)
    if m:
        return m.group(1)
    if lines:
        m = re.search(r'\.listing:(\d+):', msg)
        if m:
            n = int(m.group(1))
            if 0 < n <= len(lines):
                m2 = re.match(r'@(\S+?:)?(\d+) ', lines[n - 1])
                if m2 and m2.group(1):
                    return '%s%s' % (m2.group(1), m2.group(2))
                if m2:
                    src = next((l[7:] for l in lines if l.startswith('source ')), None)
                    if src:
                        return '%s:%s' % (src, m2.group(2))
    return None


def _locate(msg, lines):
    return msg.splitlines()[-1] if msg else msg


def level():
    """'full' when the binary's listing knows every NKI operation (decision lines,
    two-op tensor_scalar ...), else 'basic'."""
    b = binary()
    lv = _level_cache.get(b)
    if lv is not None:
        return lv
    forced = os.environ.get('NX_NKI_LISTING')
    if forced in ('basic', 'full'):
        _level_cache[b] = forced
        return forced
    d = tempfile.mkdtemp(prefix='nx-nki-probe-')
    try:
        lst = os.path.join(d, 'probe.listing')
        with open(lst, 'w') as f:
            f.write('kernel probe\ndecision probe k=v\n'
                    'Vector tensor_scalar src=sbuf[0:1]+0:fp32[1] dst=sbuf[0:1]+4:fp32[1] '
                    'op0=add operand0=1 op1=mul operand1=2\n')
        p = subprocess.run([b, 'kernel', 'asm', lst, '-o', os.path.join(d, 'p.neff')],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lv = 'full' if p.returncode == 0 else 'basic'
    finally:
        for fn in os.listdir(d):
            os.unlink(os.path.join(d, fn))
        os.rmdir(d)
    _level_cache[b] = lv
    return lv


def attachable_sources(kernel_file, files):
    """The files the NEFF carries (`kernel asm --attach-source`): the kernel's own first,
    then the other files its instructions point at (its helpers), in order, as far as the
    NEFF takes them; and a note for each one left out, saying why."""
    take, notes, names, total = [], [], set(), 0
    for path in [kernel_file] + [f for f in files if f != kernel_file]:
        if not path or not os.path.isfile(path):
            continue
        name = os.path.basename(path)
        size = os.path.getsize(path)
        if len(os.fsencode(name)) > SOURCE_NAME_MAX:
            why = 'its file name is longer than the %d bytes a NEFF takes' % SOURCE_NAME_MAX
        elif name in names:
            why = 'another file of the kernel is named %s too' % name
        elif len(take) == SOURCE_FILES_MAX:
            why = 'a NEFF carries at most %d source files' % SOURCE_FILES_MAX
        elif total + size > SOURCE_MAX:
            why = 'a NEFF carries at most %d MiB of source in all (%s is %.1f MiB)' % (
                SOURCE_MAX >> 20, name, size / 2.0**20)
        else:
            take.append(path)
            names.add(name)
            total += size
            continue
        notes.append('the NEFF does not carry %s: %s' % (path, why))
    return take, notes


def assemble(listing_path, neff_path, listing, sources=(), listing_out=None):
    """The NEFF of the listing (listing: its text, for the user's line of an error),
    carrying the source files (attachable_sources) so that its profile shows the code
    (`view` attaches them); with listing_out, `kernel asm` also writes the listing there
    under the binary's output rule."""
    args = [binary(), 'kernel', 'asm', listing_path, '-o', neff_path]
    for f in sources:
        args += ['--attach-source', f]
    if listing_out:
        args += ['--listing', listing_out]
    _run(args, 'kernel asm', listing)


def output_refusal(neff_path, listing_out=None):
    """Why `kernel asm` would not write these outputs (the binary's output rule, asked
    before the kernel runs), or None when it would."""
    args = [binary(), 'kernel', 'asm', '--check', '-o', neff_path]
    if listing_out:
        args += ['--listing', listing_out]
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        return 'cannot run %s: %s' % (args[0], e)
    if p.returncode == 0:
        return None
    msg = p.stderr.strip() or 'exit status %d' % p.returncode
    return re.sub(r'^\S+ kernel asm: ', '', msg)


def capture(neff_path, ntff_path, target, start_ns=None):
    """Simulates the NEFF, profiled into ntff_path (None: not profiled, as the runtime runs
    a NEFF it already profiled), its records from start_ns on the device clock (None: 0);
    returns the simulated time in microseconds."""
    args = [binary(), 'capture', '-n', neff_path, '--target', target, '--enable-dge-notifs']
    args += ['-s', ntff_path] if ntff_path else ['--profile-nth-exec', '0']
    if start_ns:
        args += ['--start-ns', str(start_ns)]
    p = _run(args, 'capture')
    # capture's one line on stderr: "capture: wrote F: ..., 21.492 us simulated, ..."
    m = re.search(r'([0-9.]+) us simulated', p.stderr)
    if not m:
        raise errors.NkiError('capture: no simulated time in its report: %s' % p.stderr.strip())
    return float(m.group(1))


def summary_json(neff_path, ntff_path, out_path):
    """Writes the profile's summary-json to out_path (the binary's output rule: a file
    there is replaced only if it is a summary-json document)."""
    _run([binary(), 'view', '-n', neff_path, '-s', ntff_path, '--output-format',
          'summary-json', '--output-file', out_path, '-q'], 'view --output-format summary-json')


def ingest(neff_path, ntff_path, data_path, display_name):
    args = [binary(), 'view', '-n', neff_path, '-s', ntff_path, '--ingest-only',
            '--display-name', display_name]
    if data_path:
        args += ['--data-path', data_path]
    return _run(args, 'view --ingest-only').stdout
