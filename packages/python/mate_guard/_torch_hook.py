"""The torch hook (mate_guard_cuda.py, shared with `mate guard-run`) as a
module of this package, importable by name: a process that receives a
guarded CUDA tensor (torch.multiprocessing) unpickles references to it."""
from ._resources import resource

_PATH = resource('mate_guard_cuda.py')
with open(_PATH) as _source:
    exec(compile(_source.read(), _PATH, 'exec'))
