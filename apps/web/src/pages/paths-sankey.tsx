import { sankey, sankeyLinkHorizontal, type SankeyLink, type SankeyNode } from 'd3-sankey';
import { useMemo } from 'preact/hooks';
import { formatNumber } from '../format';

/** One edge of a paths answer: keys such as `2_/pricing` (step, then item). */
export interface PathsEdge {
  source: string;
  target: string;
  value: number;
  average_conversion_time: number;
}

/** A path key's item without its step: `2_/pricing` → `/pricing`. */
export const itemOf = (key: string) => key.slice(key.indexOf('_') + 1);
export const stepOf = (key: string) => Number(key.slice(0, key.indexOf('_')));

type Node = SankeyNode<{ key: string }, { edge: PathsEdge }>;
type Link = SankeyLink<{ key: string }, { edge: PathsEdge }>;

const WIDTH = 960;
const NODE_WIDTH = 10;

/**
 * The edges as a Sankey diagram (d3-sankey's layout, drawn as SVG): a column per step, a node per
 * item, each link as wide as the persons' steps that took it. A link answers a click with its
 * edge; the same edges are listed as a table, with a button each, for the keyboard.
 */
export function PathsSankey({ edges, selected, onSelect }: { edges: PathsEdge[]; selected: PathsEdge | null; onSelect: (edge: PathsEdge) => void }) {
  const layout = useMemo(() => {
    const keys = [...new Set(edges.flatMap((e) => [e.source, e.target]))];
    const steps = Math.max(...keys.map(stepOf));
    const perStep = Math.max(...Array.from({ length: steps }, (_, i) => keys.filter((k) => stepOf(k) === i + 1).length));
    const height = Math.max(240, Math.min(900, perStep * 48));
    const graph = sankey<{ key: string }, { edge: PathsEdge }>()
      .nodeId((n) => n.key)
      .nodeWidth(NODE_WIDTH)
      .nodePadding(14)
      // Each node in its step's column, whatever its links.
      .nodeAlign((n) => stepOf((n as Node).key) - 1)
      .extent([
        [1, 8],
        [WIDTH - 160, height - 8],
      ])({
      nodes: keys.map((key) => ({ key })),
      links: edges.map((edge) => ({ source: edge.source, target: edge.target, value: edge.value, edge })),
    });
    return { ...graph, height };
  }, [edges]);
  const path = sankeyLinkHorizontal<{ key: string }, { edge: PathsEdge }>();
  return (
    // Focusable: on a narrow screen the diagram scrolls sideways inside it, by keyboard too.
    <figure class="paths-sankey" tabIndex={0} aria-label="Paths diagram">
      <svg
        viewBox={`0 0 ${WIDTH} ${layout.height}`}
        role="img"
        aria-label={`Paths: ${edges.length} edges between the steps of the persons' sessions; the table below lists them`}
        data-testid="paths-sankey"
      >
        <g fill="none">
          {(layout.links as Link[]).map((link) => {
            const edge = link.edge;
            const isSelected = selected !== null && selected.source === edge.source && selected.target === edge.target;
            return (
              <path
                key={`${edge.source}→${edge.target}`}
                class={isSelected ? 'paths-link selected' : 'paths-link'}
                d={path(link) ?? undefined}
                stroke-width={Math.max(1, link.width ?? 1)}
                data-source={edge.source}
                data-target={edge.target}
                data-value={edge.value}
                onClick={() => onSelect(edge)}
              >
                <title>
                  {itemOf(edge.source)} → {itemOf(edge.target)}: {formatNumber(edge.value)}
                </title>
              </path>
            );
          })}
        </g>
        {(layout.nodes as Node[]).map((node) => (
          <g key={node.key} data-node={node.key}>
            <rect class="paths-node" x={node.x0} y={node.y0} width={(node.x1 ?? 0) - (node.x0 ?? 0)} height={Math.max(1, (node.y1 ?? 0) - (node.y0 ?? 0))} />
            <text class="paths-label" x={(node.x1 ?? 0) + 4} y={((node.y0 ?? 0) + (node.y1 ?? 0)) / 2} dominant-baseline="middle">
              {itemOf(node.key).length > 28 ? `${itemOf(node.key).slice(0, 27)}…` : itemOf(node.key)}
            </text>
          </g>
        ))}
      </svg>
    </figure>
  );
}
