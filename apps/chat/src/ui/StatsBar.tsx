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

/** The figures of the last reply from a server: what it reported in `usage`, and the times seen here. */
function ServerStats({ server }: { readonly server: state.ServerConnection }) {
  const s = state.serverStats.value;
  return (
    <>
      <Stat name="backend" label="Backend" value={`server ${server.endpoint.base} (${server.model})`} />
      {s && (
        <>
          {s.promptTokens !== undefined && (
            <Stat name="prompt" label="Prompt tokens" value={String(s.promptTokens)} />
          )}
          <Stat name="generated" label="Generated tokens" value={String(s.generatedTokens)} />
          {s.timeToFirstTokenMs !== undefined && (
            <Stat name="ttft" label="Time to first token" value={`${s.timeToFirstTokenMs.toFixed(0)} ms`} />
          )}
          {s.decodeTokensPerSecond !== undefined && (
            <Stat name="decode-speed" label="Decode" value={`${s.decodeTokensPerSecond.toFixed(1)} tok/s`} />
          )}
          <Stat name="stop-reason" label="Stopped by" value={s.stopReason} />
        </>
      )}
    </>
  );
}

/** The figures of the last reply, the backend and the memory in use (or those of a server's reply). */
export function StatsBar() {
  const server = state.server.value;
  if (server !== undefined) {
    return (
      <section class="panel" aria-labelledby="stats-heading">
        <h2 id="stats-heading">Numbers</h2>
        <dl class="stats">
          <ServerStats server={server} />
        </dl>
      </section>
    );
  }
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
