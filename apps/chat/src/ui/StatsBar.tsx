import * as state from './state';

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

function Stat({
  name,
  label,
  value,
}: {
  readonly name: string;
  readonly label: string;
  readonly value: string;
}) {
  return (
    <div class="stat">
      <dt>{label}</dt>
      <dd data-stat={name}>{value}</dd>
    </div>
  );
}

/** The figures of the last reply, the backend and the memory in use. */
export function StatsBar() {
  const s = state.stats.value;
  const b = state.backend.value;
  const m = state.model.value;
  return (
    <section class="panel" aria-labelledby="stats-heading">
      <h2 id="stats-heading">Numbers</h2>
      <dl class="stats">
        <Stat name="backend" label="Backend" value={b ? `${b.name} (${b.adapter})` : 'starting…'} />
        {s && (
          <>
            <Stat name="prefilled" label="Prefilled tokens" value={String(s.prefilledTokens)} />
            <Stat name="reused" label="Reused from cache" value={String(s.reusedTokens)} />
            <Stat name="generated" label="Generated tokens" value={String(s.generatedTokens)} />
            <Stat name="ttft" label="Time to first token" value={`${s.timeToFirstTokenMs.toFixed(0)} ms`} />
            <Stat
              name="prefill-speed"
              label="Prefill"
              value={`${s.prefillTokensPerSecond.toFixed(1)} tok/s`}
            />
            <Stat name="decode-speed" label="Decode" value={`${s.decodeTokensPerSecond.toFixed(1)} tok/s`} />
            <Stat name="context" label="Context" value={`${s.contextUsed} / ${s.contextCapacity}`} />
            <Stat name="stop-reason" label="Stopped by" value={s.stopReason} />
          </>
        )}
        {m && (
          <Stat
            name="memory"
            label="Memory"
            value={`${mib(m.weightBytes)} weights${s ? ` + ${mib(s.cacheBytes)} KV cache` : ''}`}
          />
        )}
      </dl>
    </section>
  );
}
