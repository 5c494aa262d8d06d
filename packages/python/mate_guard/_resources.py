"""Where the files mate-guard ships sit: inside the installed package
(`_shipped/`, put there by the build backend), else in the source checkout
(packages/core-native: an editable install, or the package run from the
repository)."""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_CORE = os.path.normpath(os.path.join(_HERE, '..', '..', 'core-native'))

# name -> its place in the checkout
_CHECKOUT = {
    'libmate_guard_cuda.so': os.path.join(_CORE, 'build', 'Release', 'libmate_guard_cuda.so'),
    'settings.json': os.path.join(_CORE, 'src', 'native', 'options', 'settings.json'),
}

SHIPPED = os.path.join(_HERE, '_shipped')


def resource(name):
    """The path of a shipped file (it may not exist: the caller says so)."""
    shipped = os.path.join(SHIPPED, name)
    # An installed package (a wheel: its _shipped/ folder) uses its own copy, and names it when it is missing:
    # the checkout's place exists only in a source checkout (an editable install), which has no _shipped/.
    return shipped if os.path.exists(shipped) or os.path.isdir(SHIPPED) else _CHECKOUT[name]


def library_path():
    # MATE_GUARD_CUDA_LIBRARY: the library `mate guard-run` points at; also
    # lets a user try a library built elsewhere.
    return os.environ.get('MATE_GUARD_CUDA_LIBRARY') or resource('libmate_guard_cuda.so')
