/**
 * Where a render is, for the log line of one that ran out of time: waiting for a browser, for its
 * slot's pages, in the template, or printing (loading the document, printing it, reading the PDF,
 * compacting and storing it).
 */
export type RenderStage = 'browser' | 'pages' | 'template' | 'print';

export class RenderProgress {
  #stage: RenderStage = 'browser';
  #stageStartedAt: number;
  #htmlChars: number | undefined;

  constructor(private readonly startedAt: number) {
    this.#stageStartedAt = startedAt;
  }

  enter(stage: Exclude<RenderStage, 'browser'>, htmlChars?: number): void {
    this.#stage = stage;
    this.#stageStartedAt = performance.now();
    if (htmlChars !== undefined) this.#htmlChars = htmlChars;
  }

  summary(): { stage: RenderStage; stageMs: number; elapsedMs: number; htmlChars?: number } {
    const now = performance.now();
    return {
      stage: this.#stage,
      stageMs: roundMs(now - this.#stageStartedAt),
      elapsedMs: roundMs(now - this.startedAt),
      htmlChars: this.#htmlChars,
    };
  }
}

export function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}
