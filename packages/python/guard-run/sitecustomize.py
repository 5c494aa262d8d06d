# The npm core's python/sitecustomize.py (copied there at build time by
# packages/core-native/scripts/copy-python.js, beside the hook as
# mate_guard_cuda.py). Put on PYTHONPATH by `mate guard-run --device cuda`: when (and only when)
# the program imports torch, its CUDA allocations go to mate-guard's device
# guard. Then the sitecustomize this file shadows runs, as it would have.
import os
import sys


def _run_shadowed_sitecustomize():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec('sitecustomize', rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def _device_from_handoff():
    """The run's device setting, from the one handoff guard-run wrote."""
    raw = os.environ.get('MATE_GUARD_SETTINGS')
    if not raw:
        return None
    try:
        import json

        return (json.loads(raw).get('settings') or {}).get('device')
    except ValueError:
        return None


if _device_from_handoff() == 'cuda':
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import mate_guard_cuda

        mate_guard_cuda.install_import_hook()
    finally:
        del sys.path[0]

_run_shadowed_sitecustomize()
