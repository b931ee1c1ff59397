/** A special (control) token: the text that names it and its id. */
export interface SpecialToken {
  readonly text: string;
  readonly id: number;
}
