/**
 * Which print a killed print compositor belonged to. Chromium starts one compositor process per
 * print and tells nobody which: not the protocol, not its command line. When the memory watch kills
 * one, its print never answers (seen: `Page.printToPDF` still pending minutes later), so
 * without this the render would end only at its deadline, as RENDER_TIMEOUT.
 *
 * The owner of a compositor started at time T began before T and is still in flight: a compositor
 * exits before its print's answer arrives (seen every time: docs/performance-log/2026-11-22-to-28-service.md), so a
 * print that has returned owns no live compositor. Those prints are the suspects. A suspect that
 * later returns a PDF had a working compositor, so it was not the owner; once one suspect is left,
 * it is the owner and is stopped with DOCUMENT_TOO_LARGE (memory). Usually there is one suspect from
 * the start. Should a suspect fail instead, or return a PDF right after the kill (its compositor may
 * have finished just before it), nothing can be concluded and nothing is stopped: the owner ends at
 * its deadline.
 * Times are clock ticks since boot (10 ms), the clock of /proc/<pid>/stat; a print's start is taken
 * before its document is loaded, early rather than late, which can only add suspects.
 */
import { nowTicks } from '../process-memory-watch.js';

/** Ticks of leeway on every comparison (both clocks tick every 10 ms). */
const SLACK_TICKS = 2;
/**
 * A print that returns a PDF sooner than this after a kill may have been composed just before it
 * (its compositor had handed the PDF over and was about to exit).
 */
const SETTLED_AFTER_KILL_TICKS = 50;

/** A print in flight, as the tracker holds it. */
export interface TrackedPrint {
  /** Aborted (with the reason given to `compositorKilled`) when this print's compositor was killed. */
  readonly signal: AbortSignal;
  /** Call once when the print returned a PDF (`ok`) or failed. */
  end(ok: boolean): void;
}

interface Print {
  startTicks: number;
  abort: AbortController;
}

export class PrintTracker {
  readonly #inFlight = new Set<Print>();
  #suspectGroups: { suspects: Set<Print>; reason: unknown; killedAtTicks: number }[] = [];

  /** Registers a print about to start. */
  begin(): TrackedPrint {
    const print: Print = { startTicks: nowTicks(), abort: new AbortController() };
    this.#inFlight.add(print);
    let ended = false;
    return {
      signal: print.abort.signal,
      end: (ok) => {
        if (ended) return;
        ended = true;
        this.#end(print, ok);
      },
    };
  }

  /** The memory watch killed a print compositor that started at `startTicks`. */
  compositorKilled(startTicks: number, reason: unknown): void {
    const suspects = new Set([...this.#inFlight].filter((p) => p.startTicks <= startTicks + SLACK_TICKS));
    if (suspects.size === 0) return;
    this.#suspectGroups.push({ suspects, reason, killedAtTicks: nowTicks() });
    this.#settle();
  }

  #end(print: Print, ok: boolean): void {
    const endTicks = nowTicks();
    this.#inFlight.delete(print);
    for (const group of this.#suspectGroups) {
      if (!group.suspects.delete(print)) continue;
      // A suspect that failed, or finished right after the kill, may have been the owner: no conclusion.
      if (!ok || endTicks < group.killedAtTicks + SETTLED_AFTER_KILL_TICKS) group.suspects.clear();
    }
    this.#settle();
  }

  /** Stops the owner of every group narrowed down to one suspect; forgets settled groups. */
  #settle(): void {
    for (const group of this.#suspectGroups) {
      if (group.suspects.size !== 1) continue;
      const [owner] = group.suspects;
      group.suspects.clear();
      owner!.abort.abort(group.reason);
    }
    this.#suspectGroups = this.#suspectGroups.filter((group) => group.suspects.size > 0);
  }
}
