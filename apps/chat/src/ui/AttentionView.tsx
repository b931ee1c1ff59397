import { useEffect, useRef, useState } from 'preact/hooks';
import type { AttentionMap } from '../protocol';
import { attention, attentionPending } from './attention-state';
import { describeAttention } from './attention-text';
import { cellAt, drawHeatmap, FAINTEST, type HeatmapLayout } from './heatmap';
import { requestAttention } from './model-worker-client';
import * as state from './state';
import './attention.css';

const range = (count: number) => Array.from({ length: count }, (_, i) => i);

/** A select of 0..count-1 with its label. */
function NumberSelect(props: {
  readonly id: string;
  readonly label: string;
  readonly count: number;
  readonly value: number;
  readonly onPick: (value: number) => void;
}) {
  return (
    <div class="setting">
      <label for={props.id}>{props.label}</label>
      <select
        id={props.id}
        value={String(props.value)}
        onChange={(event) => props.onPick(Number(event.currentTarget.value))}
      >
        {range(props.count).map((i) => (
          <option key={i} value={String(i)}>
            {i}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Redraws when the page's colours change: the theme select, or the system's light/dark setting. */
function useColourScheme(): string {
  const [dark, setDark] = useState(() => matchMedia('(prefers-color-scheme: dark)').matches);
  useEffect(() => {
    const query = matchMedia('(prefers-color-scheme: dark)');
    const onChange = () => setDark(query.matches);
    query.addEventListener('change', onChange);
    return () => query.removeEventListener('change', onChange);
  }, []);
  return `${state.theme.value} ${dark}`;
}

/** The heatmap of a map, and the weight and token pair under the pointer. */
function Heatmap({ map }: { readonly map: AttentionMap }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [layout, setLayout] = useState<HeatmapLayout | undefined>(undefined);
  const [hover, setHover] = useState<{ row: number; column: number } | undefined>(undefined);
  const scheme = useColourScheme();
  useEffect(() => {
    if (canvas.current) setLayout(drawHeatmap(canvas.current, map));
  }, [map, scheme]);
  const onPointerMove = (event: PointerEvent) => {
    const element = canvas.current;
    if (!element || !layout) return;
    const box = element.getBoundingClientRect();
    const x = ((event.clientX - box.left) * element.width) / box.width;
    const y = ((event.clientY - box.top) * element.height) / box.height;
    setHover(cellAt(layout, x, y));
  };
  const n = map.tokens.length;
  const first = map.total - n;
  const token = (i: number) => `${JSON.stringify(map.tokens[i])} (${first + i})`;
  return (
    <>
      <canvas
        ref={canvas}
        class="heatmap"
        role="img"
        aria-label={describeAttention(map)}
        data-cells={layout?.n}
        data-cell={layout?.cell}
        data-left={layout?.left}
        data-top={layout?.top}
        onPointerMove={onPointerMove}
        onPointerLeave={() => setHover(undefined)}
      />
      <output class="attention-value" aria-live="off">
        {hover
          ? `${token(hover.row)} → ${token(hover.column)}: ${
              hover.column > hover.row
                ? '0 (a later token: masked)'
                : map.probs[hover.row * n + hover.column].toFixed(4)
            }`
          : 'Point at a cell to see the attention of the row token to the column token.'}
      </output>
    </>
  );
}

/** Why there is no map to show, or undefined when there is one. */
function missing(map: AttentionMap | undefined, replies: number): string | undefined {
  if (state.model.value === undefined) return 'Load a model and send a message to see its attention.';
  if (replies === 0)
    return 'Send a message: the attention over the conversation shows once the reply is done.';
  if (state.busy.value !== 'idle') return 'The map is computed once the reply is done.';
  if (map === undefined) return 'Computing the map…';
  if (map.tokens.length === 0)
    return 'This reply was not generated since the page was opened; send a message to see the attention.';
  return undefined;
}

/**
 * The attention view: for the last reply, the attention of a chosen layer and head over the conversation's last
 * tokens as a heatmap, asked of the worker when the view is open and the model is idle (never while generating).
 */
export function AttentionView() {
  const [open, setOpen] = useState(false);
  const [layer, setLayer] = useState(0);
  const [head, setHead] = useState(0);
  const model = state.model.value;
  const idle = state.busy.value === 'idle';
  const replies = state.messages.value.filter((message) => message.role === 'assistant').length;
  useEffect(() => {
    attention.value = undefined;
    setLayer(0);
    setHead(0);
  }, [model]);
  useEffect(() => {
    if (open && idle && model && replies > 0) requestAttention(layer, head);
  }, [open, idle, model, replies, layer, head]);
  const map = attention.value;
  const why = missing(map, replies);
  return (
    <details class="panel attention" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>
        <h2>Attention</h2>
      </summary>
      {model && (
        <div class="row">
          <NumberSelect
            id="attention-layer"
            label="Layer"
            count={map?.layers ?? 1}
            value={layer}
            onPick={setLayer}
          />
          <NumberSelect
            id="attention-head"
            label="Head"
            count={map?.heads ?? 1}
            value={head}
            onPick={setHead}
          />
        </div>
      )}
      {why !== undefined ? (
        <p class="attention-note">{why}</p>
      ) : (
        map && (
          <div class="attention-map" aria-busy={attentionPending.value}>
            {map.total > map.tokens.length && (
              <p class="attention-note">
                The last {map.tokens.length} of the conversation's {map.total} tokens, attending among
                themselves (from position 0).
              </p>
            )}
            <Heatmap map={map} />
            <p class="attention-note">
              Colour: the weight on a log scale, from {FAINTEST} or less (empty) to 1.
            </p>
          </div>
        )
      )}
    </details>
  );
}
