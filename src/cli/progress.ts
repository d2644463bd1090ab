/** Where a progress bar is drawn: standard error, as far as the bar needs it. */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface Progress {
  update(done: number, total: number): void;
  /** Erases the bar, so the summary that follows starts on a clean line. */
  end(): void;
}

const NONE: Progress = { update: () => undefined, end: () => undefined };
const WIDTH = 30;
const REDRAW_MS = 100;

/**
 * A one-line bar redrawn in place (`\r`), only on a terminal: piped or redirected standard
 * error gets nothing, so logs and scripts see the summary alone.
 */
export function progressBar(
  stream: ProgressStream,
  label: string,
  now: () => number = Date.now,
): Progress {
  if (!stream.isTTY) return NONE;
  let drawnAt = -Infinity;
  let drawn = false;
  return {
    update(done, total) {
      const at = now();
      if (done < total && at - drawnAt < REDRAW_MS) return;
      drawnAt = at;
      drawn = true;
      stream.write(`\r${renderBar(label, done, total)}`);
    },
    end() {
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}

export function renderBar(label: string, done: number, total: number): string {
  const share = total === 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(share * WIDTH);
  const percent = String(Math.floor(share * 100)).padStart(3);
  return `${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${percent}% ${done}/${total}`;
}
