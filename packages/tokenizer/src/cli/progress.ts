/** A one-line progress bar drawn on a terminal (stderr), redrawn at most every 100 ms. */
export function progressBar(
  write: (text: string) => void,
  label: string,
): (done: number, total: number) => void {
  const start = performance.now();
  let drawn = -Infinity;
  return (done, total) => {
    const now = performance.now();
    if (done < total && now - drawn < 100) return;
    drawn = now;
    const width = 30;
    const fraction = total === 0 ? 1 : done / total;
    const filled = Math.round(fraction * width);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
    const seconds = ((now - start) / 1000).toFixed(1);
    write(`\r${label} [${bar}] ${(fraction * 100).toFixed(0).padStart(3)}% ${done}/${total} ${seconds}s`);
    if (done >= total) write('\n');
  };
}
