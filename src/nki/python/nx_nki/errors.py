"""errors.py: errors of the NKI shim, located at the user's source line.

Every error a kernel can cause (an unsupported call, an out-of-bounds index, too many
partitions, a failing pipeline step) is an NkiError whose message starts with the user's
FILE:LINE and names the API call. Tracebacks of an NkiError are cut to the user's own
frames; an NkiError that nobody catches prints its one-line message (no traceback from
inside the shim) and the process exits with status 1.
"""
import os
import sys

_BASE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG_DIRS = tuple(os.path.join(_BASE, n) + os.sep for n in ('nx_nki', 'neuronxcc', 'nki'))


def add_pkg_dir(d):
    """Registers another directory whose frames count as the shim's (neuronxcc/, nki/)."""
    global PKG_DIRS
    d = os.path.abspath(d)
    if d not in PKG_DIRS:
        PKG_DIRS = PKG_DIRS + (d,)


_shim_codes = {}


def is_shim_file(fn):
    r = _shim_codes.get(fn)
    if r is None:
        r = os.path.abspath(fn).startswith(PKG_DIRS) or fn.startswith('<frozen')
        _shim_codes[fn] = r
    return r


def user_frame(depth=1):
    """The innermost frame outside the shim's packages (the user's call site)."""
    f = sys._getframe(depth)
    while f is not None and is_shim_file(f.f_code.co_filename):
        f = f.f_back
    return f


class NkiError(Exception):
    """An error in a user's kernel. `where` is 'FILE:LINE' of the call that caused it,
    `api` the API call ('nl.load', 'nisa.nc_matmul', ...)."""

    def __init__(self, msg, api=None, where=None, exit_code=1):
        self.api = api
        self.where = where
        self.exit_code = exit_code
        self.bare = msg
        text = msg
        if api:
            text = '%s: %s' % (api, text)
        if where:
            text = '%s: %s' % (where, text)
        super().__init__(text)


def located(msg, api=None, depth=2):
    """An NkiError at the current user call site (api: a name, or the Tensor being
    indexed)."""
    if api is not None and not isinstance(api, str):
        api = "indexing '%s'" % (api.buf.name or '?')
    f = user_frame(depth + 1)
    where = '%s:%d' % (f.f_code.co_filename, f.f_lineno) if f is not None else None
    return NkiError(msg, api, where)


def cut_traceback(e):
    """Drops the shim's frames from e's traceback, keeping the user's."""
    tb = e.__traceback__
    keep = []
    while tb is not None:
        if not is_shim_file(tb.tb_frame.f_code.co_filename):
            keep.append(tb)
        tb = tb.tb_next
    if not keep:
        return e.with_traceback(None)
    # rebuild a chain of the user's frames only
    import types
    nxt = None
    for t in reversed(keep):
        nxt = types.TracebackType(nxt, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return e.with_traceback(nxt)


_prev_hook = None


def _hook(etype, value, tb):
    if isinstance(value, NkiError):
        sys.stderr.write('error: %s\n' % value)
        sys.stderr.flush()
        return
    _prev_hook(etype, value, tb)


def install_hook():
    """Prints an uncaught NkiError as one line (the exit status stays 1)."""
    global _prev_hook
    if _prev_hook is None:
        _prev_hook = sys.excepthook
        sys.excepthook = _hook
