"""inspect_mode.py: what a process records of its kernels while `neuron-explorer inspect`
runs it, or whenever the Neuron runtime's variable NEURON_RT_INSPECT_ENABLE=1 is set, in
the layout the runtime's inspect writes (docs/nki.md, "inspect"):

  <NEURON_RT_INSPECT_OUTPUT_DIR>/<instance>_pid_<pid>/
    neff_<hash>.neff                each kernel executed (hash: of the NEFF's bytes)
    <hash>_instid_0_vnc_0.ntff      the device profile of its first execution, simulated
    system_profile.trace.json       the host side, as Chrome trace JSON (at exit)

Every kernel call is a slice named after the kernel with its steps (trace, compile,
assemble, simulate) inside it and its inputs' shapes in its args; each execution on the
device is an nc_exec_running slice on the NeuronCore's own thread. The host slices and
the device profiles' records share one clock: Unix time in ns, advanced by the monotonic
clock from the session's start (NX_NKI_INSPECT_CLOCK, which `inspect` sets to its own
start; else this process's), so that `view -d` puts them on one time axis. At most
NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC events are kept: past that the oldest go.
Files are only ever created (never written over another), in directories of their own.
"""
import atexit
import collections
import hashlib
import inspect as pyinspect
import json
import os
import re
import socket
import sys
import threading
import time

from . import driver
from . import dtypes as D

TRACE_FILE = 'system_profile.trace.json'
DEVICE_TID = 0          # the NeuronCore's thread in the host trace (host threads are > 0)
DEFAULT_MAX_EVENTS = 1000000

_session = None
_lock = threading.Lock()


def _flag(name, default):
    v = os.environ.get(name, '').strip().lower()
    if not v:
        return default
    return v not in ('0', 'false', 'no', 'off')


def _clock():
    """(monotonic ns, Unix ns) of the session's start."""
    m = re.fullmatch(r'(\d+):(\d+)', os.environ.get('NX_NKI_INSPECT_CLOCK', ''))
    if m:
        return int(m.group(1)), int(m.group(2))
    return time.monotonic_ns(), time.time_ns()


def _instance():
    """The host's name as the <instance> of <instance>_pid_<pid> (no '_')."""
    return re.sub(r'[^A-Za-z0-9.-]', '-', socket.gethostname() or 'localhost')


def _us(ns):
    """ns as Chrome trace microseconds, exact: '1733350000123456.789'."""
    return '%d.%03d' % divmod(int(ns), 1000)


def _describe(fn, args, kwargs):
    """The inputs of a call: 'a: float32[512, 256]' for arrays and placeholders."""
    try:
        bound = pyinspect.signature(fn).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        bound = dict(('arg%d' % i, v) for i, v in enumerate(args))
        bound.update(kwargs)
    out = []
    for k, v in bound.items():
        shape = getattr(v, 'shape', None)
        if shape is not None and hasattr(v, 'dtype'):
            try:
                dt = D.of_array(v).name if hasattr(v, 'ndim') else v.dtype.name
            except Exception:
                dt = str(v.dtype)
            out.append('%s: %s%s' % (k, dt, list(shape)))
        else:
            r = repr(v)
            out.append('%s: %s' % (k, r if len(r) <= 80 else r[:77] + '...'))
    return out


class _NoCall:
    """A call while inspect is off: records nothing."""
    active = False

    def now(self):
        return 0

    def span(self, name, t0):
        pass

    def execute(self, neff_path, target):
        pass

    def end(self, error=None):
        pass


NO_CALL = _NoCall()


class Call:
    """One kernel call: its steps, then its own slice when it ends."""
    active = True

    def __init__(self, ses, kernel, fn, args, kwargs, grid, mode, where):
        self.ses = ses
        self.kernel = kernel
        self.tid = threading.get_native_id()
        self.args = {'kernel': kernel, 'source': where(), 'inputs': _describe(fn, args, kwargs),
                     'mode': mode}
        if grid:
            self.args['grid'] = [int(g) for g in grid]
        ses.thread(self.tid)
        self.t0 = ses.now()

    def now(self):
        return self.ses.now()

    def span(self, name, t0):
        self.ses.slice(name, 'nki', t0, self.ses.now(), self.tid, {'kernel': self.kernel})

    def execute(self, neff_path, target):
        self.args.update(self.ses.execute(self, neff_path, target))

    def end(self, error=None):
        if error is not None:
            self.args['error'] = '%s: %s' % (type(error).__name__, error)
        self.ses.slice(self.kernel, 'nki_call', self.t0, self.ses.now(), self.tid, self.args)


class Session:
    """What this process records (see the module's text)."""

    def __init__(self):
        self.pid = os.getpid()
        self.mono0, self.wall0 = _clock()
        out = os.environ.get('NEURON_RT_INSPECT_OUTPUT_DIR') or 'output'
        self.dir = os.path.join(os.path.abspath(out), '%s_pid_%d' % (_instance(), self.pid))
        try:
            cap = int(os.environ.get('NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC', ''))
        except ValueError:
            cap = DEFAULT_MAX_EVENTS
        self.events = collections.deque(maxlen=max(cap, 1))
        self.recorded = 0
        self.system = _flag('NEURON_RT_INSPECT_SYSTEM_PROFILE', True)
        self.device = _flag('NEURON_RT_INSPECT_DEVICE_PROFILE', True)
        self.executions = {}     # NEFF hash -> executions so far
        self.threads = {}        # host thread id -> its name
        self.lock = threading.Lock()
        atexit.register(self.write)

    def now(self):
        return self.wall0 + time.monotonic_ns() - self.mono0

    def thread(self, tid):
        with self.lock:
            self.threads.setdefault(tid, threading.current_thread().name)

    def slice(self, name, cat, t0, t1, tid, args):
        if not self.system:
            return
        ev = {'name': name, 'cat': cat, 'ph': 'X', 'ts': _us(t0), 'dur': _us(max(t1 - t0, 0)),
              'pid': self.pid, 'tid': tid, 'args': args}
        with self.lock:
            self.events.append(ev)
            self.recorded += 1

    def _place_neff(self, neff_path):
        """The NEFF copied into the process's directory once; (its hash, its name)."""
        with open(neff_path, 'rb') as f:
            data = f.read()
        h = str(int.from_bytes(hashlib.sha256(data).digest()[:8], 'big'))
        name = 'neff_%s.neff' % h
        os.makedirs(self.dir, exist_ok=True)
        try:
            fd = os.open(os.path.join(self.dir, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o644)
        except FileExistsError:
            return h, name
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
        return h, name

    def execute(self, call, neff_path, target):
        """Runs the kernel's NEFF on the simulated device, profiling its first execution;
        returns what the call's slice says of it."""
        h, neff = self._place_neff(neff_path)
        with self.lock:
            k = self.executions[h] = self.executions.get(h, 0) + 1
        ntff = '%s_instid_0_vnc_0.ntff' % h if k == 1 and self.device else None
        t0 = self.now()
        us = driver.capture(os.path.join(self.dir, neff),
                            os.path.join(self.dir, ntff) if ntff else None, target, start_ns=t0)
        call.span('simulate', t0)
        what = {'neff': neff, 'device_profile': ntff, 'execution': k}
        self.slice('nc_exec_running', 'device', t0, t0 + int(round(us * 1000)), DEVICE_TID,
                   dict(what, kernel=call.kernel))
        return what

    def write(self):
        """Writes the host trace (a new file, put in place whole)."""
        if os.getpid() != self.pid or not self.recorded:
            return
        with self.lock:
            events = list(self.events)
            meta = [{'name': 'process_name', 'ph': 'M', 'ts': 0, 'pid': self.pid, 'tid': 0,
                     'args': {'name': '%s (pid %d)' % (' '.join(sys.argv) or 'python',
                                                       self.pid)}},
                    {'name': 'thread_name', 'ph': 'M', 'ts': 0, 'pid': self.pid,
                     'tid': DEVICE_TID, 'args': {'name': 'NeuronCore 0 (simulated)'}}]
            meta += [{'name': 'thread_name', 'ph': 'M', 'ts': 0, 'pid': self.pid, 'tid': t,
                      'args': {'name': n}} for t, n in sorted(self.threads.items())]
            info = {'clock': 'Unix time; the device profiles beside this file are on it too',
                    'max_events': self.events.maxlen, 'events_recorded': self.recorded,
                    'events_dropped': self.recorded - len(events)}
        os.makedirs(self.dir, exist_ok=True)
        final = os.path.join(self.dir, TRACE_FILE)
        tmp = os.path.join(self.dir, '.%s.tmp-%d' % (TRACE_FILE, self.pid))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, 'w') as f:
                f.write('{"traceEvents":[\n')
                f.write(',\n'.join(_event_json(e) for e in meta + events))
                f.write('\n],\n"neuronExplorerInspect":%s}\n' % json.dumps(info))
            os.link(tmp, final)    # never over a file already there
        except OSError as e:
            sys.stderr.write('nki inspect: cannot write %s: %s\n' % (final, e))
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _event_json(e):
    """One event, its ts and dur as exact decimal numbers."""
    s = json.dumps({k: v for k, v in e.items() if k not in ('ts', 'dur')}, default=str)
    times = ',"ts":%s' % e['ts'] + (',"dur":%s' % e['dur'] if 'dur' in e else '')
    return s[:-1] + times + '}'


def begin(kernel, fn, args, kwargs, grid, mode, where):
    """The call about to run: recorded when inspect is on in this process. where() gives
    the kernel's FILE:LINE."""
    global _session
    if not _flag('NEURON_RT_INSPECT_ENABLE', False):
        return NO_CALL
    with _lock:
        if _session is None or _session.pid != os.getpid():
            _session = Session()   # a forked child records on its own
        ses = _session
    return Call(ses, kernel, fn, args, kwargs, grid, mode, where)
