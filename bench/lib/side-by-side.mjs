// What every benchmark here shares: run the variants side by side in one
// process, rotating their order each repetition so that drift on a noisy
// machine hits all of them alike, and compare medians.

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * Runs `measure(variant)` (sync or async, returns a number) once per
 * variant to warm caches, then `reps` rounds in rotating order.
 * Returns { times: number[][], medians: number[] } in variant order.
 */
export async function sideBySide(variants, reps, measure, { warm = true } = {}) {
  if (warm) for (const v of variants) await measure(v);
  const times = variants.map(() => []);
  for (let i = 0; i < reps; i++) {
    for (let k = 0; k < variants.length; k++) {
      const j = (k + i) % variants.length;
      times[j].push(await measure(variants[j]));
    }
  }
  return { times, medians: times.map(median) };
}
