import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/** Props of {@link Chart}. */
export interface ChartProps {
  /** Chart options without width (the chart takes its container's width). */
  options: Omit<uPlot.Options, 'width'>;
  /** The data, as uPlot's aligned arrays. */
  data: uPlot.AlignedData;
  /** Test id of the container. */
  id: string;
}

/**
 * A uPlot chart: made once, then fed new data with `setData` (no rebuild while a session streams),
 * and resized with its container, so it stays fast at tens of thousands of points.
 */
export function Chart({ options, data, id }: ChartProps) {
  const container = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    const element = container.current!;
    plot.current = new uPlot({ ...options, width: Math.max(200, element.clientWidth) }, data, element);
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
  return <div class="chart" data-chart={id} ref={container} />;
}

/** A y scale from zero to a little above the largest value (bars and sizes start at zero). */
export const fromZero: uPlot.Scale = { range: (_self, _min, max) => [0, max > 0 ? max * 1.1 : 1] };

/** Axes with room for the y labels, which are written short (20K, 1.5M). */
export function axes(format: (value: number) => string): uPlot.Axis[] {
  return [{}, { size: 72, values: (_self, splits) => splits.map((value) => format(value)) }];
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
