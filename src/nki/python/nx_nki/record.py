"""record.py: the recording of one kernel run.

While a kernel runs, every NKI call appends one compact instruction record (Ins) to the
current Trace: the operation, its engine (or None: the compiler picks one), the user's
source location, the loop nest in force, the destination and source views, and the
operation's attributes. Views are tuples (buf, blk, off, axes): the buffer, the tile
(block index), the element offset inside the tile and ((stride, size), ...) per axis, axis
0 being the partition axis of on-chip views. Nothing is allocated or synchronised while
recording: the compiler passes (alloc.py, sync.py, emit.py) run once the kernel returns.
"""
import sys

from . import errors

# The trace being recorded; None outside a kernel run.
CUR = None


class Ins:
    __slots__ = ('op', 'eng', 'loc', 'nest', 'dst', 'srcs', 'a', 'addr', 'waits', 'sig',
                 'swaits', 'cost', 'epoch')

    def __init__(self, op, eng, loc, nest, dst, srcs, a, epoch=0):
        self.op = op
        self.eng = eng
        self.loc = loc
        self.nest = nest
        self.dst = dst
        self.srcs = srcs
        self.a = a
        self.swaits = ()
        self.epoch = epoch

    def __repr__(self):
        return 'Ins(%s %s %s:%s)' % (self.op, self.eng, self.loc[0], self.loc[1])


_new_ins = Ins.__new__


class Trace:
    """One kernel run being recorded."""

    def __init__(self, name, numerics, target):
        self.name = name
        self.numerics = numerics
        self.target = target
        self.ins = []
        self.bufs = []
        self.nest = ()             # ((var, value, line, file), ...) outermost first
        self.epoch = 0             # iterations of nl.sequential_range loops begun so far
        self.loops = []            # the live loop iterators, outermost first
        self.loop_kinds = {}       # (line, file) of a `for` -> affine_range, range, ...
        self.notes = []            # (loc, text): things the user should know
        self.program_id = ()
        self.grid = ()
        self.source = None         # the kernel's file
        self.func_line = 0
        self.spmd_rank = 0
        self.consts = {}

    def add(self, op, eng, loc, dst, srcs, a):
        # (the fields set one by one: cheaper than Ins.__init__'s call, once per instruction)
        i = _new_ins(Ins)
        i.op = op
        i.eng = eng
        i.loc = loc
        i.nest = self.nest
        i.dst = dst
        i.srcs = srcs
        i.a = a
        i.swaits = ()
        i.epoch = self.epoch
        self.ins.append(i)
        return i

    def note(self, loc, text):
        if (loc, text) not in self.notes:
            self.notes.append((loc, text))


_codes = errors._shim_codes


_getframe = sys._getframe


# file -> {line: (file, line)}: one location tuple per call site, shared by its records
_LOCS = {}


def here(depth=2):
    """(file, line) of the user's call site."""
    f = _getframe(depth)
    while True:
        fn = f.f_code.co_filename
        r = _codes.get(fn)
        if r is None:
            r = errors.is_shim_file(fn)
        if not r:
            lines = _LOCS.get(fn)
            if lines is None:
                lines = _LOCS[fn] = {}
            ln = f.f_lineno
            loc = lines.get(ln)
            if loc is None:
                loc = lines[ln] = (fn, ln)
            return loc
        f = f.f_back


def cur(api):
    """The trace in force; an error when an NKI call is made outside a kernel."""
    if CUR is None:
        raise errors.located('called outside a kernel (run the kernel through nki.jit, '
                             'nki.baremetal, nki.benchmark or nki.simulate_kernel)', api, 2)
    return CUR


class _Loop:
    """The iterator behind nl.affine_range and friends: runs the loop concretely and keeps
    the trace's loop nest (variable, value, line of the `for`) for the `iter` lines."""
    __slots__ = ('it', 'var', 'line', 'file', 'kind', 'depth', 'trace', 'seq')

    def __init__(self, it, kind):
        self.it = iter(it)
        self.kind = kind
        self.seq = kind == 'sequential_range'
        self.trace = CUR
        f = sys._getframe(2)
        while errors.is_shim_file(f.f_code.co_filename):
            f = f.f_back
        self.line = f.f_lineno
        self.file = f.f_code.co_filename
        self.var = _loop_var(f)
        self.depth = -1

    def __iter__(self):
        return self

    def __next__(self):
        t = self.trace
        try:
            v = next(self.it)
        except StopIteration:
            if t is not None and self.depth >= 0:
                _pop(t, self.depth)
                self.depth = -1
            raise
        if t is not None:
            if self.seq:
                t.epoch += 1                    # (the compiler keeps its iterations apart)
            d = self.depth
            loops = t.loops
            if 0 <= d < len(loops) and loops[d] is self:
                if d + 1 < len(loops):
                    del loops[d + 1:]           # inner loops that did not finish
                t.nest = t.nest[:d] + ((self.var, v, self.line, self.file),)
            else:
                self.depth = len(loops)
                loops.append(self)
                t.loop_kinds[(self.line, self.file)] = self.kind
                t.nest = t.nest + ((self.var, v, self.line, self.file),)
        return v

    def __del__(self):
        t = self.trace
        if t is not None and self.depth >= 0 and self.depth < len(t.loops) and \
                t.loops[self.depth] is self:
            _pop(t, self.depth)

    def __len__(self):
        return len(self.it) if hasattr(self.it, '__len__') else 0


def _pop(t, depth):
    del t.loops[depth:]
    t.nest = t.nest[:depth]


_var_cache = {}


def _loop_var(f):
    """The loop variable of the `for` at frame f's current line ('i' in `for i in ...`)."""
    key = (f.f_code.co_filename, f.f_lineno)
    v = _var_cache.get(key)
    if v is None:
        import linecache
        import re
        src = linecache.getline(key[0], key[1])
        m = re.search(r'\bfor\s+([A-Za-z_][A-Za-z_0-9]*)\s+in\b', src)
        v = m.group(1) if m else 'i'
        _var_cache[key] = v
    return v


def loop(it, kind):
    return _Loop(it, kind)


_new_loop = _Loop.__new__


def for_loop(it, var, line):
    """The iterator of a kernel's `for` statement (loops.py wraps every one): a plain
    `range` becomes a recorded loop; an NKI range takes the `for`'s variable and line."""
    if type(it) is _Loop:
        if var is not None:
            it.var = var
        it.line = line
        return it
    if type(it) is not range or CUR is None or var is None:
        return it
    lp = _new_loop(_Loop)
    lp.it = iter(it)
    lp.kind = 'range'
    lp.seq = False
    lp.trace = CUR
    lp.line = line
    lp.file = _getframe(1).f_code.co_filename
    lp.var = var
    lp.depth = -1
    return lp
