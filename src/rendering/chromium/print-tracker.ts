/**
 * Which print a killed print compositor belonged to. Chromium starts one compositor process per
 * print and tells nobody which: not the protocol, not its command line. When the memory watch kills
 * one, its print never answers (measured: `Page.printToPDF` still pending two minutes later), so
 * without this the render would end only at its deadline, as RENDER_TIMEOUT.
 *
 * The owner of a compositor started at time T is a print that began before T and had not finished
 * at T. When the watch kills a compositor:
 *  - if a print that could have owned it has already finished, its owner may be that one (a
 *    compositor lingers a moment after its print): nothing is stopped, since guessing could stop an
 *    innocent render (the owner, if still waiting, ends at its deadline);
 *  - otherwise the owner is one of the prints still in flight that began before T, the suspects.
 *    A suspect that returns a PDF well after the kill had a working compositor, so it was not the
 *    owner; once one suspect is left, it is the owner and is stopped with DOCUMENT_TOO_LARGE
 *    (memory). Usually there is one suspect from the start. Should a suspect fail instead, or
 *    return a PDF right after the kill (its compositor may have finished just before it), nothing
 *    can be concluded and nothing is stopped.
 * Times are clock ticks since boot (10 ms), the clock of /proc/<pid>/stat; a print's start is taken
 * before its document is loaded, early rather than late, which can only add suspects.
 */
import { nowTicks } from './process-memory-watch.js';

/** Ticks of leeway on every comparison (both clocks tick every 10 ms). */
const SLACK_TICKS = 2;
/** A print that returns a PDF sooner than this after a kill may have been composed just before it. */
const SETTLED_AFTER_KILL_TICKS = 100;
/** Finished prints are remembered this long (a compositor outlives its print only briefly). */
const FINISHED_MEMORY_TICKS = 60 * 100;

/** A print in flight, as the tracker holds it. */
export interface TrackedPrint {
  /** Aborted (with the reason given to `compositorKilled`) when this print's compositor was killed. */
  readonly signal: AbortSignal;
  /** Call once when the print returned a PDF (`ok`) or failed. */
  end(ok: boolean): void;
}

interface Print {
  startTicks: number;
  endTicks: number | undefined;
  abort: AbortController;
}

export class PrintTracker {
  readonly #inFlight = new Set<Print>();
  #finished: Print[] = [];
  #suspectGroups: { suspects: Set<Print>; reason: unknown; killedAtTicks: number }[] = [];

  /** Registers a print about to start. */
  begin(): TrackedPrint {
    const print: Print = { startTicks: nowTicks(), endTicks: undefined, abort: new AbortController() };
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
    const couldOwn = (p: Print) => p.startTicks <= startTicks + SLACK_TICKS && (p.endTicks === undefined || p.endTicks >= startTicks - SLACK_TICKS);
    if (this.#finished.some(couldOwn)) return;
    const suspects = new Set([...this.#inFlight].filter(couldOwn));
    if (suspects.size === 0) return;
    this.#suspectGroups.push({ suspects, reason, killedAtTicks: nowTicks() });
    this.#settle();
  }

  #end(print: Print, ok: boolean): void {
    print.endTicks = nowTicks();
    this.#inFlight.delete(print);
    this.#finished = this.#finished.filter((p) => p.endTicks! > print.endTicks! - FINISHED_MEMORY_TICKS);
    this.#finished.push(print);
    for (const group of this.#suspectGroups) {
      if (!group.suspects.delete(print)) continue;
      // A suspect that failed, or finished right after the kill, may have been the owner: no conclusion.
      if (!ok || print.endTicks < group.killedAtTicks + SETTLED_AFTER_KILL_TICKS) group.suspects.clear();
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
