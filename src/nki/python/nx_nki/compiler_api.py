"""compiler_api.py: nki.compiler directives (scheduling hints, allocation control). The shim
accepts them and records a note: its own policies decide (docs/nki.md)."""


def _passthrough(*a, **k):
    if len(a) == 1 and callable(a[0]) and not k:
        return a[0]
    return lambda f: f


skip_middle_end_transformations = _passthrough
enable_stack_allocator = _passthrough
force_auto_alloc = _passthrough
no_reorder = _passthrough


class _Null:
    def __call__(self, *a, **k):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __getattr__(self, n):
        return self


sbuf = _Null()
psum = _Null()
tile_pool = _Null()
with_schedule = _Null()
