import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import { axes, bars, Chart, fromZero, integerAxis, integerScale, markers } from './chart.js';
import { compact } from './format.js';
import type { Marker, Turn } from './session-model.js';

/** Tokens per turn and the context size, with compactions and directives marked. */
export function TokenCharts({ turns, markers: found, version }: { turns: Turn[]; markers: Marker[]; version: number }) {
  const tokens = useMemo<uPlot.AlignedData>(
    () => [turns.map((_, index) => index + 1), turns.map((turn) => turn.input), turns.map((turn) => turn.output)],
    [version],
  );
  const context = useMemo<uPlot.AlignedData>(
    () => [turns.map((_, index) => index + 1), turns.map((turn) => turn.context)],
    [version],
  );
  const marks = () =>
    found
      .filter((mark) => mark.kind === 'compact' || mark.kind === 'directive')
      .map((mark) => ({ x: mark.turn + 0.5, color: mark.kind === 'compact' ? '#d97706' : '#7c3aed' }));
  return (
    <>
      <figure>
        <figcaption>Tokens per turn</figcaption>
        <Chart
          id="tokens"
          data={tokens}
          format={compact}
          options={{
            height: 200,
            scales: { x: integerScale, y: fromZero },
            axes: axes(compact, integerAxis()),
            series: [
              { label: 'turn' },
              { label: 'input', stroke: '#2563eb', fill: '#2563eb88', paths: bars(), points: { show: false } },
              { label: 'output', stroke: '#16a34a', fill: '#16a34a88', paths: bars(), points: { show: false } },
            ],
            plugins: [markers(marks)],
          }}
        />
      </figure>
      <figure>
        <figcaption>Context size (compactions orange, directives purple)</figcaption>
        <Chart
          id="context"
          data={context}
          format={compact}
          options={{
            height: 200,
            scales: { x: integerScale, y: fromZero },
            axes: axes(compact, integerAxis()),
            series: [{ label: 'turn' }, { label: 'context tokens', stroke: '#dc2626', width: 2, fill: '#dc262622' }],
            plugins: [markers(marks)],
          }}
        />
      </figure>
    </>
  );
}
