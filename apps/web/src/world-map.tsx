import { useEffect, useState } from 'preact/hooks';
import { ErrorState, Loading } from './components';
import { formatNumber } from './format';

/** One country's outline as an SVG path, keyed by its ISO 3166-1 alpha-2 code. */
interface CountryShape {
  code: string;
  name: string;
  path: string;
}

const WIDTH = 960;
const HEIGHT = 480;

let shapes: Promise<CountryShape[]> | null = null;

/**
 * Natural Earth's 1:110m countries (world-atlas), loaded on first use as their own chunk so the
 * first page load does not carry them, and drawn in an equirectangular projection (longitude and
 * latitude straight to x and y: the map only has to show which countries have how much).
 */
function loadShapes(): Promise<CountryShape[]> {
  shapes ??= Promise.all([import('world-atlas/countries-110m.json'), import('topojson-client'), import('iso-3166/1-n-to-1-a2')]).then(
    ([atlas, topojson, iso]) => {
      const topology = (atlas.default ?? atlas) as unknown as Parameters<typeof topojson.feature>[0];
      const collection = topojson.feature(topology, (topology as unknown as { objects: { countries: never } }).objects.countries) as unknown as {
        features: { id?: string; properties: { name: string }; geometry: { type: string; coordinates: number[][][] | number[][][][] } | null }[];
      };
      const numericToAlpha2 = iso.iso31661NumericToAlpha2 as Record<string, string>;
      return collection.features
        .filter((f) => f.geometry !== null && f.id !== undefined && numericToAlpha2[f.id] !== undefined)
        .map((f) => ({ code: numericToAlpha2[f.id!]!, name: f.properties.name, path: geometryPath(f.geometry!) }));
    },
  );
  return shapes;
}

function geometryPath(geometry: { type: string; coordinates: number[][][] | number[][][][] }): string {
  const polygons = (geometry.type === 'Polygon' ? [geometry.coordinates] : geometry.coordinates) as number[][][][];
  return polygons.flatMap((rings) => rings.flatMap(ringPaths)).join('');
}

/**
 * A ring with its longitudes made continuous (a ring crossing the antimeridian jumps from 180 to
 * −180, which would draw a band across the map), drawn again one world over where it spills past
 * an edge; the SVG's viewBox clips the overflow.
 */
function ringPaths(ring: number[][]): string[] {
  let previous = ring[0]?.[0] ?? 0;
  let shift = 0;
  const points = ring.map(([lon, lat]) => {
    if (lon! + shift - previous > 180) shift -= 360;
    else if (lon! + shift - previous < -180) shift += 360;
    previous = lon! + shift;
    return [previous, lat!] as const;
  });
  const lons = points.map(([lon]) => lon);
  const offsets = [0, ...(Math.max(...lons) > 180 ? [-360] : []), ...(Math.min(...lons) < -180 ? [360] : [])];
  return offsets.map(
    (offset) =>
      points
        .map(([lon, lat], i) => `${i === 0 ? 'M' : 'L'}${(((lon + offset + 180) / 360) * WIDTH).toFixed(1)},${(((90 - lat) / 180) * HEIGHT).toFixed(1)}`)
        .join('') + 'Z',
  );
}

/** Light to the accent colour by the share of the largest value. */
function fill(value: number, max: number): string {
  if (value <= 0 || max <= 0) return '#e6e8ee';
  const t = 0.15 + 0.85 * (value / max);
  const mix = (from: number, to: number) => Math.round(from + (to - from) * t);
  return `rgb(${mix(232, 29)},${mix(237, 74)},${mix(255, 255)})`;
}

/**
 * Countries coloured by value (the trend broken down by `$geoip_country_code`). Each country's
 * value is on its path as `data-value`; the caller's table lists the same numbers as text.
 */
export function WorldMap({ values, title }: { values: Map<string, number>; title: string }) {
  const [countries, setCountries] = useState<CountryShape[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    loadShapes().then(setCountries, setError);
  }, []);
  if (error) return <ErrorState error={error} />;
  if (!countries) return <Loading what="the map" />;
  const max = Math.max(0, ...values.values());
  return (
    <div class="world-map" data-testid="world-map">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={title}>
        {countries.map((country) => {
          const value = values.get(country.code) ?? 0;
          return (
            <path key={country.code} d={country.path} fill={fill(value, max)} data-country={country.code} data-value={value}>
              <title>
                {country.name}: {formatNumber(value)}
              </title>
            </path>
          );
        })}
      </svg>
    </div>
  );
}
