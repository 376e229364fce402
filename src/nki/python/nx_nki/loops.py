"""loops.py: iteration variables for every `for` of a kernel, plain Python `range` too.

A kernel's loops are Python loops. nl.affine_range and friends return the recorder's
loop iterator (record._Loop), which keeps the loop nest for the `iter` lines; a plain
`for i in range(n)` would unroll without a trace. So before a kernel runs, its function
is compiled again from the user's own file with every `for` statement's iterator wrapped:

    for i in range(n):          becomes    for i in __nx_for__(range(n), 'i', LINE):

`__nx_for__` (record.for_loop) turns a `range` into a recorded loop and names an NKI
range's variable and line from the `for` itself, whatever form the loop was written in
(an NKI range made on another line, several lines, a tuple target). Everything else
iterates unchanged. The new code keeps the original file name and line numbers, so
tracebacks, the lines the recorder reads and the user's breakpoints stay the user's; the
function keeps its globals, defaults and closure. A function whose source cannot be read
(typed at a prompt, made by exec) runs as it is: its loops then carry only their line.
"""
import ast
import linecache
import types

from . import record

FOR = '__nx_for__'             # the wrapper's name inside the rewritten code
_OUTER = '__nx_outer__'        # the function that makes the closure cells

_done = {}                     # code object -> rewritten code object (or None: runs as is)


class _WrapFor(ast.NodeTransformer):
    """Wraps the iterator of every `for` statement (nested functions' too)."""

    def visit_For(self, node):
        self.generic_visit(node)
        t = node.target
        var = t.id if isinstance(t, ast.Name) else None
        call = ast.Call(func=ast.Name(id=FOR, ctx=ast.Load()),
                        args=[node.iter, ast.Constant(var), ast.Constant(node.lineno)],
                        keywords=[])
        node.iter = ast.copy_location(call, node.iter)
        return node


def _find_def(tree, code):
    """The def statement that compiled to code (same name, same first line)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name == code.co_name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first == code.co_firstlineno or node.lineno == code.co_firstlineno:
                return node
    return None


def _rewrite(code):
    """code compiled again with its `for` iterators wrapped; None when that cannot be done."""
    fname = code.co_filename
    src = ''.join(linecache.getlines(fname))
    if not src:
        return None
    try:
        tree = ast.parse(src, fname)
    except (SyntaxError, ValueError):
        return None
    node = _find_def(tree, code)
    if node is None or not any(isinstance(n, ast.For) for n in ast.walk(node)):
        return None
    node.decorator_list = []
    node = _WrapFor().visit(node)
    # def __nx_outer__(__nx_for__, <free variables>): <the def>; the free variables are
    # the outer function's parameters, so the new code refers to them as closure cells
    params = [ast.arg(arg=n) for n in (FOR,) + code.co_freevars]
    outer = ast.FunctionDef(name=_OUTER, args=ast.arguments(
        posonlyargs=[], args=params, vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
        defaults=[]), body=[node], decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(outer, node)
    mod = ast.fix_missing_locations(ast.Module(body=[outer], type_ignores=[]))
    try:
        top = compile(mod, fname, 'exec', dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    for c in top.co_consts:
        if isinstance(c, types.CodeType) and c.co_name == _OUTER:
            for inner in c.co_consts:
                if isinstance(inner, types.CodeType) and inner.co_name == code.co_name:
                    return inner
    return None


def instrument(fn):
    """fn with its `for` loops recorded (see above), or fn itself."""
    code = getattr(fn, '__code__', None)
    if code is None or not isinstance(fn, types.FunctionType):
        return fn
    if code in _done:
        new = _done[code]
    else:
        new = _done[code] = _rewrite(code)
    if new is None:
        return fn
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    cells[FOR] = types.CellType(record.for_loop)
    try:
        closure = tuple(cells[n] for n in new.co_freevars)
    except KeyError:
        return fn
    g = types.FunctionType(new, fn.__globals__, fn.__name__, fn.__defaults__,
                           closure or None)
    g.__kwdefaults__ = fn.__kwdefaults__
    g.__qualname__ = fn.__qualname__
    g.__module__ = fn.__module__
    g.__doc__ = fn.__doc__
    g.__dict__.update(fn.__dict__)
    return g
