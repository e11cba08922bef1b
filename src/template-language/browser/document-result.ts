/** What a document's evaluation answers (compartment → harness → Node), as plain data. */

/** A warning raised while evaluating (an undefined variable, a text where a number belongs…). */
export interface EvaluationWarning {
  code: string;
  message: string;
}

export type DocumentResult =
  | { kind: 'ok'; out: Record<string, string>; warnings: EvaluationWarning[] }
  | { kind: 'too-large' }
  | { kind: 'error'; template?: string; message: string; line?: number; column?: number };
