import type { Piece } from './state';
import * as state from './state';

/** The likeliest alternatives of a token, one a line, for its tooltip. */
function tooltip(piece: Piece): string | undefined {
  if (piece.alternatives.length === 0) return undefined;
  return piece.alternatives
    .map(({ text, probability }) => `${JSON.stringify(text)} ${(probability * 100).toFixed(1)}%`)
    .join('\n');
}

/** A reply token by token; every string goes in as text, never as markup. */
function Pieces({ pieces }: { readonly pieces: readonly Piece[] }) {
  return (
    <>
      {pieces.map((piece, i) => (
        <span key={i} class="token" title={tooltip(piece)}>
          {piece.text}
        </span>
      ))}
    </>
  );
}

/** The conversation, the reply being streamed last. */
export function Transcript() {
  const generating = state.busy.value === 'generating';
  return (
    <section class="transcript" aria-label="Conversation" aria-live="polite">
      {state.messages.value.map((message, i) => (
        <article key={i} class={`message ${message.role}`}>
          <h3 class="visually-hidden">{message.role === 'user' ? 'You' : 'Model'}</h3>
          <div class="message-text">{message.pieces ? <Pieces pieces={message.pieces} /> : message.text}</div>
          {message.stopped && <p class="stopped">({message.stopped})</p>}
        </article>
      ))}
      {generating && (
        <article class="message assistant streaming" aria-busy="true">
          <h3 class="visually-hidden">Model (writing)</h3>
          <div class="message-text">
            <Pieces pieces={state.reply.value} />
          </div>
        </article>
      )}
    </section>
  );
}
