# The reference loop's shape (shared/bench-cuda/transformer_steps.py: a small
# TransformerEncoderLayer, SGD), sampled by perf only while the timed loop
# runs: warm-up steps first, then `perf record -p <this process>` over the
# loop, stopped before the process exits (no import, no teardown).
#   python3 [-m mate_guard ...] loop_profile.py <steps> <perf.data>
# PERF: the perf command (default perf).
import os
import signal
import subprocess
import sys
import time

import torch

steps, out = int(sys.argv[1]), sys.argv[2]
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True).cuda()
opt = torch.optim.SGD(layer.parameters(), lr=1e-3)
x = torch.randn(16, 128, 256, device='cuda')


def step():
    loss = layer(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


for _ in range(20):
    step()
torch.cuda.synchronize()
perf = subprocess.Popen(
    [os.environ.get('PERF', 'perf'), 'record', '-q', '-F', '3997', '-p', str(os.getpid()), '-o', out],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
time.sleep(1.5)  # perf attached to every thread
t = time.time()
for _ in range(steps):
    step()
torch.cuda.synchronize()
elapsed = time.time() - t
perf.send_signal(signal.SIGINT)
perf.wait()
print(f'{steps} steps in {elapsed:.3f} s')
