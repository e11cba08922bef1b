/**
 * Progress of a batch as the command shows it: a cli-progress bar (done, failed, rate, time left) when
 * stdout is a terminal, otherwise one plain line per step (a log or a CI job reads those, not a bar
 * redrawn in place).
 */
import { SingleBar } from 'cli-progress';

/** What one poll of the batch says, plus the rate the command measured. */
export interface ProgressSnapshot {
  total: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Items rendered (completed or failed) per second since the command first saw the batch; null until measurable. */
  ratePerSecond: number | null;
  /** The service's estimate, or the rate's; null when neither is known. */
  secondsLeft: number | null;
}

export interface ProgressReporter {
  update(snapshot: ProgressSnapshot): void;
  /** Runs `write` (a message on another stream) where it cannot garble the bar: the bar goes on below it. */
  aside(write: () => void): void;
  /** Ends the bar (leaves it on screen) before the summary is printed. */
  stop(): void;
}

/** The plain line for a snapshot: `progress: 2/3 done, 0 failed, 1.5/s, about 4 s left`. */
export function formatProgressLine(s: ProgressSnapshot): string {
  const parts = [`${s.completed}/${s.total} done`, `${s.failed} failed`];
  if (s.cancelled > 0) parts.push(`${s.cancelled} cancelled`);
  parts.push(formatRate(s.ratePerSecond), formatTimeLeft(s.secondsLeft));
  return `progress: ${parts.join(', ')}`;
}

/** `12/s`, `1.5/s`, `18/min`, or `-/s` before there is a rate. */
export function formatRate(perSecond: number | null): string {
  if (perSecond === null || !Number.isFinite(perSecond)) return '-/s';
  if (perSecond >= 10) return `${Math.round(perSecond)}/s`;
  if (perSecond >= 1) return `${perSecond.toFixed(1)}/s`;
  return `${Math.max(1, Math.round(perSecond * 60))}/min`;
}

/** `about 4 s left`, `about 2 min 5 s left`, `about 1 h 3 min left`, or `time left unknown`. */
export function formatTimeLeft(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return 'time left unknown';
  const whole = Math.round(seconds);
  if (whole < 60) return `about ${whole} s left`;
  if (whole < 3600) return `about ${Math.floor(whole / 60)} min ${whole % 60} s left`;
  return `about ${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min left`;
}

/** A bar on a terminal, plain lines elsewhere. */
export function createProgressReporter(stream: NodeJS.WriteStream): ProgressReporter {
  return stream.isTTY ? barReporter(stream) : lineReporter(stream);
}

function lineReporter(stream: NodeJS.WritableStream): ProgressReporter {
  let last = '';
  return {
    update(s) {
      const step = `${s.completed}/${s.failed}/${s.cancelled}/${s.total}`;
      if (step === last) return;
      last = step;
      stream.write(`${formatProgressLine(s)}\n`);
    },
    aside: (write) => write(),
    stop() {},
  };
}

function barReporter(stream: NodeJS.WriteStream): ProgressReporter {
  const bar = new SingleBar({
    stream,
    format: '{bar} {completed}/{total} done | {failed} failed | {rate} | {left}',
    barCompleteChar: '\u2588',
    barIncompleteChar: '\u2591',
    fps: 5,
  });
  let started = false;
  return {
    update(s) {
      const settled = s.completed + s.failed + s.cancelled;
      const payload = {
        completed: s.completed,
        failed: s.failed,
        rate: formatRate(s.ratePerSecond),
        left: formatTimeLeft(s.secondsLeft),
      };
      if (!started) {
        bar.start(s.total, settled, payload);
        started = true;
      } else {
        bar.setTotal(s.total);
        bar.update(settled, payload);
      }
    },
    aside(write) {
      if (started) bar.stop();
      started = false;
      write();
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/** Measures items rendered per second from the polls the command makes. */
export class RateMeter {
  private first: { atMs: number; rendered: number } | undefined;

  /** The rate after this observation, or null while under a second or nothing rendered since. */
  observe(rendered: number, atMs: number): number | null {
    if (!this.first) {
      this.first = { atMs, rendered };
      return null;
    }
    const seconds = (atMs - this.first.atMs) / 1000;
    const count = rendered - this.first.rendered;
    return seconds >= 1 && count > 0 ? count / seconds : null;
  }
}
