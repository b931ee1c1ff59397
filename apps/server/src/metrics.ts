/** What the scheduler reports at the time of a scrape. */
export interface QueueState {
  readonly waiting: number;
  readonly running: number;
}

/**
 * The server's counters, written in the Prometheus text format by `render`: requests by route and status, queue
 * depth, tokens in and out, decode throughput and time to first token.
 */
export class Metrics {
  readonly #requests = new Map<string, number>();
  promptTokens = 0;
  completionTokens = 0;
  aborted = 0;
  #steps = 0;
  #stepSeconds = 0;
  #stepTokens = 0;
  #firstTokenSum = 0;
  #firstTokenCount = 0;

  /** Counts an answered request. */
  request(route: string, status: number): void {
    const key = `route="${route}",status="${status}"`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
  }

  /** Records one batched step: tokens run through the model, tokens sampled, and its duration. */
  step(tokensRun: number, sampled: number, seconds: number): void {
    this.#steps++;
    this.#stepTokens += tokensRun;
    this.#stepSeconds += seconds;
    this.completionTokens += sampled;
  }

  /** Records the time from a request's arrival to its first token. */
  firstToken(seconds: number): void {
    this.#firstTokenSum += seconds;
    this.#firstTokenCount++;
  }

  render(state: QueueState): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: [string, number][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    const requests = [...this.#requests].map(([labels, n]): [string, number] => [`{${labels}}`, n]);
    metric('loom_requests_total', 'counter', 'HTTP requests answered, by route and status.', requests);
    metric('loom_requests_aborted_total', 'counter', 'Generations cancelled because the client left.', [
      ['', this.aborted],
    ]);
    metric('loom_queue_depth', 'gauge', 'Requests waiting for a free sequence.', [['', state.waiting]]);
    metric('loom_running_sequences', 'gauge', 'Sequences being decoded together.', [['', state.running]]);
    metric('loom_prompt_tokens_total', 'counter', 'Prompt tokens received.', [['', this.promptTokens]]);
    metric('loom_completion_tokens_total', 'counter', 'Tokens generated.', [['', this.completionTokens]]);
    metric('loom_batch_steps_total', 'counter', 'Batched forward passes run.', [['', this.#steps]]);
    metric('loom_batch_tokens_total', 'counter', 'Tokens run through the model (prefill and decode).', [
      ['', this.#stepTokens],
    ]);
    metric('loom_step_seconds_total', 'counter', 'Seconds spent in batched steps.', [
      ['', this.#stepSeconds],
    ]);
    const rate = this.#stepSeconds > 0 ? this.completionTokens / this.#stepSeconds : 0;
    metric('loom_tokens_per_second', 'gauge', 'Tokens generated per second of batched steps.', [['', rate]]);
    metric(
      'loom_time_to_first_token_seconds',
      'summary',
      'Seconds from a request arriving to its first token.',
      [
        ['_sum', this.#firstTokenSum],
        ['_count', this.#firstTokenCount],
      ],
    );
    return `${lines.join('\n')}\n`;
  }
}
