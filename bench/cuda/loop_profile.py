# The reference loop's shape (shared/bench-cuda/transformer_steps.py: a small
# TransformerEncoderLayer, SGD), sampled by perf only while the timed loop
# runs: warm-up steps first, then `perf record -p <this process>` over the
# loop, stopped before the process exits (no import, no teardown).
#   python3 [-m mate_guard ...] loop_profile.py <steps> <perf.data>
# PERF: the perf command (default perf). WATCH: another command to run over
# the loop instead ({pid}: this process; bench/cuda/loop_waits.sh). Also
# prints the inter-processor interrupts the whole machine took meanwhile.
import os
import shlex
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


def interrupts():
    # Machine-wide totals of /proc/interrupts' IPI rows (function calls, TLB
    # shootdowns, reschedules): a driver call that interrupts every core
    # slows the loop's threads wherever they run.
    rows = {}
    with open('/proc/interrupts') as f:
        for line in f:
            cols = line.split()
            if cols and cols[0].rstrip(':') in ('CAL', 'TLB', 'RES'):
                rows[cols[0].rstrip(':')] = sum(int(c) for c in cols[1:] if c.isdigit())
    return rows


watch = os.environ.get('WATCH')
cmd = (
    shlex.split(watch.replace('{pid}', str(os.getpid())))
    if watch
    else [os.environ.get('PERF', 'perf'), 'record', '-q', '-F', '3997', '-p', str(os.getpid()), '-o', out]
)
perf = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1.5)  # perf attached to every thread
irq0 = interrupts()
t = time.time()
for _ in range(steps):
    step()
torch.cuda.synchronize()
elapsed = time.time() - t
irq1 = interrupts()
perf.send_signal(signal.SIGINT)
try:
    perf.wait(timeout=30)
except subprocess.TimeoutExpired:
    perf.kill()
print(f'{steps} steps in {elapsed:.3f} s; interrupts ' + ' '.join(f'{k}={irq1[k] - irq0[k]}' for k in sorted(irq0)))
