// Where a device report happened in a multi-process job: the launcher's
// rank (torchrun, mpirun and the like set RANK, LOCAL_RANK, WORLD_SIZE).
import type { ViolationEvent } from './event';

/** ` (rank 1 of 2, local rank 1)` for a process of a multi-process job, '' otherwise. */
export function rankText(d: ViolationEvent['device']): string {
  if (d?.rank == null && d?.worldSize == null) return '';
  const parts = [`rank ${d.rank ?? '?'}${d.worldSize != null ? ` of ${d.worldSize}` : ''}`];
  if (d.localRank != null) parts.push(`local rank ${d.localRank}`);
  return ` (${parts.join(', ')})`;
}
