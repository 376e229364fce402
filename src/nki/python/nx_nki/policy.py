"""policy.py: the compiler decisions the shim makes, as one options object.

Each field is a documented, deterministic policy (docs/nki.md, "Compiler decisions") that a
user may override: from `additional_compile_opt` / NEURON_CC_FLAGS (the real compiler's
--target and --disable-dge), and from NX_NKI_POLICY="key=value,..." or the `nx_policy=`
keyword of nki.baremetal/benchmark/profile for the shim's own knobs.
"""
import os
import shlex

SBUF_BYTES = {'trn2': 224 * 1024, 'trn1': 192 * 1024}
# Per-partition SBUF within which a site whose loaded bytes a later load asks for again
# keeps extra buffers (the buffers served loads find them in): on trn1 fitted to the
# nki-calibration rmsnorm_matmul's weight reads (docs/simulator.md, "Gaps"); on trn2 nothing
# is measured: all of it.
SERVE_SBUF_BYTES = {'trn2': 224 * 1024, 'trn1': 152 * 1024}
PSUM_BANKS = 8
PSUM_BANK_BYTES = 2048


class Policy:
    def __init__(self):
        self.target = 'trn2'
        self.dge = True           # hardware DGE for nisa.dma_copy on trn2
        self.bufs = 4             # buffers per SBUF allocation site that has several tiles
        self.site_bufs = {}       # {line: n} per-site overrides (bufs@LINE=n)
        self.sbuf_bytes = None    # per-partition SBUF the allocator may use (None: target's)
        self.serve_sbuf = None    # of which buffers keeping loads fill (None: SERVE_SBUF_BYTES)
        self.align = 64           # SBUF tile alignment in bytes
        self.engines = 'balance'  # engine picks for unknown_engine: balance | vector
        self.queues = 4           # DMA queues per trigger engine
        self.reload_queues = 1    # queues of the compiler's re-loads (remat.py) per engine
        self.stationary_reuse = True
        self.hoist = True         # loop-invariant work done once (invariant.py)
        self.serve_loads = True   # loads of bytes a buffer still holds are served (served.py)
        self.serve_reuse = 'auto'  # buffer a new tile takes: auto | furthest | turn (served.py)
        self.window = 8           # reordering window per engine (1: program order)
        self.numerics = True
        self.fuse = True          # x op (c * x) as one single-input op (fuse.py)
        self.psum_share = True    # PSUM banks shared by sites never live at once
        self.loop_order = 'reuse'   # affine_range nests: reuse | source (interchange.py)
        self.spill_ahead = None   # pooled SBUF rotates this many tiles a site (None: bufs)
        self.spill_trigger = 'writer'  # spill saves triggered by: writer | sync
        self.spill_queues = 1     # queues per spill direction and trigger engine
        self.notes = []           # options accepted and ignored

    def capacity(self):
        return self.sbuf_bytes or SBUF_BYTES[self.target]

    def serve_capacity(self):
        """The SBUF that sites keeping loaded bytes for a later load fill with extra buffers
        (never more than capacity())."""
        return min(self.serve_sbuf or SERVE_SBUF_BYTES[self.target], self.capacity())

    def ahead(self):
        """Tiles of a site the SBUF pool rotates when it spills (spill_ahead, else bufs)."""
        return self.spill_ahead if self.spill_ahead is not None else self.bufs

    def describe(self):
        return ('target=%s dge=%s bufs=%d engines=%s queues=%d reload_queues=%d sbuf=%d '
                'window=%d' % (self.target, 'on' if self.dge and self.target == 'trn2' else 'off',
                               self.bufs, self.engines, self.queues, self.reload_queues,
                               self.capacity(), self.window))


_MODELLED = {'--target', '--disable-dge', '--enable-dge'}


def parse_cc_flags(pol, text, source):
    """Applies the real compiler's flags we model (--target, --disable-dge); others are
    accepted and noted as ignored."""
    if not text:
        return
    args = shlex.split(text) if isinstance(text, str) else list(text)
    i = 0
    while i < len(args):
        a = args[i]
        val = None
        if '=' in a and a.startswith('--'):
            a, val = a.split('=', 1)
        if a == '--target':
            if val is None and i + 1 < len(args):
                i += 1
                val = args[i]
            if val not in ('trn1', 'trn2'):
                raise ValueError('%s: --target %s: expected trn1 or trn2' % (source, val))
            pol.target = val
        elif a == '--disable-dge':
            pol.dge = False
        elif a == '--enable-dge':
            pol.dge = True
        elif a.startswith('-'):
            pol.notes.append('%s: %s ignored (not modelled)' % (source, args[i]))
        i += 1


_ON = ('1', 'on', 'true', 'yes')
_OFF = ('0', 'off', 'false', 'no')


def _flag(v):
    """A switch's value: on/off (1/0, true/false, yes/no); anything else is refused."""
    if v.lower() in _ON:
        return True
    if v.lower() in _OFF:
        return False
    raise ValueError


def _count(v):
    """A count or a size: an integer of at least 1; 0, negatives and words are refused."""
    n = int(v)
    if n < 1:
        raise ValueError
    return n


def _one_of(*words):
    """A value that must be one of words."""
    def read(v):
        if v not in words:
            raise ValueError
        return v
    return read


# Each policy key: the Policy attribute it sets and how its value is read (bufs@LINE=N,
# per site, is the one key with a part of its own).
_KEYS = {
    'bufs': ('bufs', _count), 'sbuf': ('sbuf_bytes', _count),
    'engines': ('engines', _one_of('balance', 'vector')), 'queues': ('queues', _count),
    'reload_queues': ('reload_queues', _count), 'dge': ('dge', _flag),
    'target': ('target', _one_of('trn1', 'trn2')), 'numerics': ('numerics', _flag),
    'stationary_reuse': ('stationary_reuse', _flag), 'hoist': ('hoist', _flag),
    'serve_loads': ('serve_loads', _flag), 'window': ('window', _count), 'fuse': ('fuse', _flag),
    'serve_sbuf': ('serve_sbuf', _count),
    'serve_reuse': ('serve_reuse', _one_of('auto', 'furthest', 'turn')),
    'align': ('align', _count), 'spill_ahead': ('spill_ahead', _count),
    'spill_queues': ('spill_queues', _count),
    'loop_order': ('loop_order', _one_of('source', 'reuse')),
    'psum_share': ('psum_share', _flag),
    'spill_trigger': ('spill_trigger', _one_of('writer', 'sync')),
}


def parse_policy(pol, text, source='NX_NKI_POLICY'):
    if not text:
        return
    for item in text.replace(';', ',').split(','):
        item = item.strip()
        if not item:
            continue
        if '=' not in item:
            raise ValueError("%s: '%s': expected key=value" % (source, item))
        k, v = item.split('=', 1)
        k = k.strip()
        v = v.strip()
        try:
            if k.startswith('bufs@'):
                pol.site_bufs[int(k[5:])] = _count(v)
                continue
            attr, read = _KEYS[k]
            setattr(pol, attr, read(v))
        except KeyError:
            raise ValueError("%s: unknown policy '%s' (known: bufs@LINE, %s)"
                             % (source, k, ', '.join(_KEYS))) from None
        except ValueError:
            raise ValueError("%s: bad value '%s' for %s" % (source, v, k)) from None


def make(additional_compile_opt=None, nx_policy=None, target=None):
    pol = Policy()
    parse_cc_flags(pol, os.environ.get('NEURON_CC_FLAGS', ''), 'NEURON_CC_FLAGS')
    parse_cc_flags(pol, additional_compile_opt, 'additional_compile_opt')
    parse_policy(pol, os.environ.get('NX_NKI_POLICY', ''))
    parse_policy(pol, nx_policy, 'nx_policy')
    if target:
        pol.target = target
    return pol
