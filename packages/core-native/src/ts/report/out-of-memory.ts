// The out-of-memory report: what was asked for, what the guard held, what
// the device had, in the spirit of PyTorch's caching allocator message.
import { rankText } from './device-place';
import type { DeviceMemoryAccount, ViolationEvent } from './event';

export function formatBytes(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(1)} KiB`;
  return `${n} B`;
}

export function formatOutOfMemory(e: ViolationEvent, m: DeviceMemoryAccount): string[] {
  const ordinal = e.device?.ordinal ?? 0;
  const b = formatBytes;
  const overhead = Math.max(0, m.liveMapped - m.liveBytes);
  const lines = [
    `ERROR: out-of-memory: a guarded allocation of ${b(m.requested)} on device ${ordinal}${rankText(e.device)} failed: the GPU has ${b(m.deviceFree)} free of ${b(m.deviceTotal)}`,
  ];
  if (e.test) lines.push(`test: ${e.test}`);
  lines.push(
    'the guard held, when it failed:',
    `  live guarded allocations: ${m.liveCount}, ${b(m.liveBytes)} asked for, ${b(m.liveMapped)} mapped (guard overhead ${b(overhead)}: each holds whole ${b(e.device?.granule ?? 2 ** 21)} granules)`,
    `  freed allocations the GPU still used (unmapped once it is done): ${b(m.pendingBytes)}`,
    `  pooled chunks not in use: ${b(m.pooledBytes)}; ranges mapped ahead: ${b(m.readyBytes)}`,
    `  quarantined freed ranges: ${m.quarantinedCount} (unmapped: ${b(m.quarantinedBytes)} of address space, no memory)`,
    `before failing it gave back ${b(m.givenBack)} and retried once; the caller got the out-of-memory error at once (PyTorch: torch.OutOfMemoryError)`,
  );
  if (m.failures > 1) lines.push(`${m.failures} allocations have failed so far in this process; only the first is reported`);
  lines.push(
    `hint: the program ran out of GPU memory, which is not a memory bug; under the guard every live allocation holds at least one whole granule${overhead > m.liveBytes / 10 ? ' (here the overhead is a large share: many small allocations)' : ''}. Try a smaller batch or fewer live tensors, or guard only part of the job (mate guard-run on the step under suspicion)`,
  );
  return lines;
}
