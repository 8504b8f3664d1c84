import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';

/** Props of {@link Chart}. */
export interface ChartProps {
  /** Chart options without width (the chart takes its container's width). */
  options: Omit<uPlot.Options, 'width'>;
  /** The data, as uPlot's aligned arrays. */
  data: uPlot.AlignedData;
  /** Test id of the container. */
  id: string;
  /** How a series' value reads in the legend while the pointer is over the chart (default: as is). */
  format?: (value: number) => string;
  /** How an x value reads in the legend (default: as the x axis writes it). */
  formatX?: (value: number) => string;
}

/**
 * A uPlot chart: made once, then fed new data with `setData` (no rebuild while a session streams),
 * and resized with its container, so it stays fast at tens of thousands of points. uPlot's own
 * legend (which reads `turn: -- input: --` until the pointer is over the chart) is replaced by
 * one of the series' names and colours, with their values while the pointer is over a point.
 * The x axis' labels, drawn on the canvas, are also kept in `data-x-ticks` (tests read them).
 */
export function Chart({ options, data, id, format = String, formatX }: ChartProps) {
  const container = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [hover, setHover] = useState<number | null>(null);
  const dataRef = useRef(data);
  dataRef.current = data;
  useEffect(() => {
    const element = container.current!;
    const [xAxis = {}, ...otherAxes] = options.axes ?? [{}, {}];
    const writeX = xAxis.values;
    const recorded: uPlot.Axis = {
      ...xAxis,
      values: (self, splits, axisIndex, space, increment) => {
        const labels =
          typeof writeX === 'function'
            ? writeX(self, splits, axisIndex, space, increment)
            : splits.map((value) => String(value));
        element.dataset.xTicks = labels.filter((label) => label !== '' && label !== null).join(',');
        return labels;
      },
    };
    plot.current = new uPlot(
      {
        ...options,
        axes: [recorded, ...otherAxes],
        legend: { show: false },
        hooks: {
          ...options.hooks,
          setCursor: [...(options.hooks?.setCursor ?? []), (self: uPlot) => setHover(self.cursor.idx ?? null)],
        },
        width: Math.max(200, element.clientWidth),
      },
      data,
      element,
    );
    const observer = new ResizeObserver(() => {
      plot.current?.setSize({ width: Math.max(200, element.clientWidth), height: options.height });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
    // The options are fixed for a chart's life; data changes go through setData below.
  }, []);
  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);
  const series = options.series.slice(1);
  const at = hover === null ? undefined : hover;
  const x = at === undefined ? undefined : dataRef.current[0][at];
  return (
    <div class="chart-box">
      <div class="chart" data-chart={id} ref={container} />
      <div class="chart-legend" data-legend={id}>
        {x !== undefined && x !== null && (
          <span class="chart-legend-x">{formatX?.(x) ?? `${options.series[0]?.label ?? ''} ${String(x)}`.trim()}</span>
        )}
        {series.map((item, index) => {
          const value = at === undefined ? undefined : dataRef.current[index + 1]?.[at];
          return (
            <span class="chart-legend-item" key={index}>
              <i style={{ background: typeof item.stroke === 'string' ? item.stroke : '#888' }} />
              {item.label}
              {value !== undefined && value !== null && <b>{format(value)}</b>}
            </span>
          );
        })}
      </div>
    </div>
  );
}

/**
 * An x axis of whole numbers (turns, a day's index): ticks only at integers, written by `label`
 * (default: the number), never 1.1, 1.2, ...
 */
export function integerAxis(label: (value: number) => string = String): uPlot.Axis {
  return {
    incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000],
    values: (_self, splits) => splits.map((value) => (Number.isInteger(value) ? label(value) : '')),
  };
}

/** An x scale over whole numbers from `first` to the last, half a step either side (bars stay whole). */
export const integerScale: uPlot.Scale = {
  time: false,
  range: (_self, min, max) => [Math.floor(min ?? 1) - 0.5, Math.ceil(max ?? 1) + 0.5],
};

/** A y scale from zero to a little above the largest value (bars and sizes start at zero). */
export const fromZero: uPlot.Scale = { range: (_self, _min, max) => [0, max > 0 ? max * 1.1 : 1] };

/** Axes with room for the y labels, which are written short (20K, 1.5M); the x axis as given (default uPlot's). */
export function axes(format: (value: number) => string, x: uPlot.Axis = {}): uPlot.Axis[] {
  return [x, { size: 72, values: (_self, splits) => splits.map((value) => format(value)) }];
}

/** A uPlot bar drawing path. */
export function bars(): uPlot.Series.PathBuilder {
  return uPlot.paths.bars!({ size: [0.6, 60] });
}

/** Draws a dashed vertical line at each x (compactions, directives) over a chart. */
export function markers(xs: () => { x: number; color: string }[]): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (self: uPlot) => {
          const context = self.ctx;
          context.save();
          context.setLineDash([4, 4]);
          context.lineWidth = 2;
          for (const { x, color } of xs()) {
            const left = self.valToPos(x, 'x', true);
            context.strokeStyle = color;
            context.beginPath();
            context.moveTo(left, self.bbox.top);
            context.lineTo(left, self.bbox.top + self.bbox.height);
            context.stroke();
          }
          context.restore();
        },
      ],
    },
  };
}
