# Peak device memory of a Python script, sampled from outside its
# allocator (cudaMemGetInfo every 5 ms on a thread: the caching allocator's
# own statistics do not exist under a pluggable allocator such as the
# guard's). Prints "peak device memory used: N MiB" after the script ends.
#   python3 bench/cuda/peak_memory.py script.py [args...]
import runpy
import sys
import threading
import time

import torch

peak = 0
done = threading.Event()


def sample():
    global peak
    while not done.is_set():
        free, total = torch.cuda.mem_get_info()
        peak = max(peak, total - free)
        time.sleep(0.005)


torch.cuda.init()
sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name='__main__')
finally:
    done.set()
    sampler.join()
    print(f'peak device memory used: {peak / 2**20:.0f} MiB', flush=True)
