/** The last line a peer printed, parsed as JSON, and its positive number fields. */
export interface PeerOutput {
  /** The line, for error messages. */
  readonly line: string;
  /** The field `key` when it is a positive number, else undefined. */
  positive(key: string): number | undefined;
}

/** Reads the JSON object a peer script prints as its last line of stdout. */
export function peerOutput(stdout: string): PeerOutput {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    parsed = undefined;
  }
  const fields: Readonly<Record<string, unknown>> =
    typeof parsed === 'object' && parsed !== null ? Object.fromEntries(Object.entries(parsed)) : {};
  return {
    line,
    positive: (key) => {
      const value = fields[key];
      return typeof value === 'number' && value > 0 ? value : undefined;
    },
  };
}
