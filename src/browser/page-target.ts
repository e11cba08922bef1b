/**
 * One Chromium page driven through a raw CDP session (no puppeteer Page object: that would enable
 * domains and round trips we do not need). Tracks whether the page is still usable: a renderer crash,
 * a closed target or a lost browser connection aborts `lost`.
 */
import type { CDPSession } from 'puppeteer-core';
import { CDPSessionEvent } from 'puppeteer-core';
import { AppError } from '../shared/errors.js';
import { raceSignal } from './cdp-helpers.js';

/**
 * Puppeteer's (untyped, internal) event for a session whose connection closed or whose target
 * detached; in puppeteer-core 24 a symbol on `CDPSessionEvent`. Should a later version drop it, a
 * lost browser is still noticed, only later (each command fails; event waits hit their deadline).
 */
const SESSION_DISCONNECTED = (CDPSessionEvent as unknown as Record<string, unknown>).Disconnected as symbol | undefined;
type SymbolEmitter = { once(event: symbol, handler: () => void): unknown };

/** A page target with its session; `lost` aborts when the page crashes or disappears. */
export class PageTarget {
  readonly #lost = new AbortController();
  #closing: Promise<void> | undefined;

  readonly #onDetached = (detached: CDPSession) => {
    if (detached === this.session) this.markLost('closed');
  };

  private constructor(
    private readonly root: CDPSession,
    readonly targetId: string,
    readonly session: CDPSession,
  ) {
    session.once('Inspector.targetCrashed', () => this.markLost('crashed'));
    // When the whole browser goes away (killed, crashed) no `detachedFromTarget` arrives: the
    // connection closes, puppeteer rejects the commands in flight and emits `Disconnected` on
    // every session. Without this, a wait for an event (a load, a print) would last until its
    // deadline and the render would fail late, as a timeout, instead of at once as RENDER_FAILED.
    if (SESSION_DISCONNECTED)
      (session as unknown as SymbolEmitter).once(SESSION_DISCONNECTED, () => this.markLost('closed'));
    root.connection()?.on(CDPSessionEvent.SessionDetached, this.#onDetached);
  }

  /**
   * Creates a blank page and attaches to it. `background` pages stay hidden behind the window's
   * visible tab, so Chromium does not composite and paint them for the screen (printing and
   * workers are unaffected); a page in its own `browserContextId` gets its own, visible window
   * (scripted documents may need requestAnimationFrame). `newWindow` gives the page a visible window
   * of its own without taking the visible tab of another window (image captures).
   */
  static async open(
    root: CDPSession,
    options: { browserContextId?: string; background?: boolean; newWindow?: boolean } = {},
    signal?: AbortSignal,
  ): Promise<PageTarget> {
    const creating = root.send('Target.createTarget', {
      url: 'about:blank',
      ...(options.background ? { background: true } : {}),
      ...(options.newWindow ? { newWindow: true } : {}),
      ...(options.browserContextId === undefined ? {} : { browserContextId: options.browserContextId }),
    });
    let targetId: string;
    try {
      ({ targetId } = signal ? await raceSignal(creating, signal) : await creating);
    } catch (error) {
      // A target Chromium creates after the caller gave up must not be left open.
      creating.then(({ targetId: late }) => root.send('Target.closeTarget', { targetId: late })).catch(() => {});
      throw error;
    }
    try {
      const attaching = root.send('Target.attachToTarget', { targetId, flatten: true });
      const { sessionId } = signal ? await raceSignal(attaching, signal) : await attaching;
      const session = root.connection()?.session(sessionId);
      if (!session) throw new Error('CDP session vanished right after attaching');
      return new PageTarget(root, targetId, session);
    } catch (error) {
      await root.send('Target.closeTarget', { targetId }).catch(() => {});
      throw error;
    }
  }

  /** Aborts with RENDER_FAILED when the renderer crashes or the target is closed. */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  get isLost(): boolean {
    return this.#lost.signal.aborted;
  }

  /** Marks the page unusable (a timed-out or crashed page is never reused). */
  markLost(why: 'crashed' | 'closed' | 'abandoned'): void {
    if (this.#lost.signal.aborted) return;
    this.root.connection()?.off(CDPSessionEvent.SessionDetached, this.#onDetached);
    const message = why === 'crashed' ? 'The page renderer crashed' : 'The page was closed during the render';
    this.#lost.abort(new AppError('RENDER_FAILED', message, { details: { reason: why } }));
  }

  /**
   * Navigates to `url` and waits for that document's load event (matched by loader, so a late
   * event of the initial about:blank cannot be mistaken for it). Returns the main frame id.
   * Afterwards `Page.loadEventFired` is on and lifecycle events are off (fewer events per document).
   */
  async navigate(url: string, signal: AbortSignal): Promise<string> {
    const { session } = this;
    // Bounded like the rest: a page whose renderer died before it ever committed (a spare
    // renderer process killed from outside, say) answers nothing and reports no crash.
    await raceSignal(session.send('Page.enable'), signal);
    await raceSignal(session.send('Page.setLifecycleEventsEnabled', { enabled: true }), signal);
    // The load event may arrive before Page.navigate answers, so remember loads until we know ours.
    let loaderId: string | undefined;
    const loadedLoaders = new Set<string>();
    let markLoaded!: () => void;
    const loaded = new Promise<void>((resolve) => (markLoaded = resolve));
    const onLifecycle = (e: { name: string; loaderId: string }) => {
      if (e.name !== 'load') return;
      loadedLoaders.add(e.loaderId);
      if (e.loaderId === loaderId) markLoaded();
    };
    session.on('Page.lifecycleEvent', onLifecycle);
    try {
      const navigation = await raceSignal(session.send('Page.navigate', { url }), signal);
      if (navigation.errorText)
        throw new AppError('RENDER_FAILED', `A renderer page did not load: ${navigation.errorText}`);
      loaderId = navigation.loaderId ?? '';
      if (!loadedLoaders.has(loaderId)) await raceSignal(loaded, signal);
      return navigation.frameId;
    } finally {
      session.off('Page.lifecycleEvent', onLifecycle);
      // Not awaited: a page stuck in a script would never answer.
      session.send('Page.setLifecycleEventsEnabled', { enabled: false }).catch(() => {});
    }
  }

  /** Closes the target; the browser ends its renderer process. Never throws. */
  close(): Promise<void> {
    this.markLost('abandoned');
    this.#closing ??= this.root
      .send('Target.closeTarget', { targetId: this.targetId })
      .then(() => undefined)
      .catch(() => undefined);
    return this.#closing;
  }
}
