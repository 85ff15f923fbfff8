import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { afterFirstResult } from '../first-result';
import { CommitInput } from '../components';
import { BREAKDOWN_TYPES, type BreakdownType } from '../insight-query';
import { PropertyPicker } from './property-pickers';

export interface BreakdownChoice {
  breakdown: string;
  breakdown_type?: BreakdownType;
  breakdown_group_type_index?: number;
}

/** The project's group types (groups_types/), for a group-property breakdown; none: the option is not offered. */
function useGroupTypes(projectId: number): { group_type_index: number; group_type: string }[] {
  const [types, setTypes] = useState<{ group_type_index: number; group_type: string }[]>([]);
  useEffect(() => {
    afterFirstResult(() => api<{ group_type_index: number; group_type: string }[]>(`/api/projects/${projectId}/groups_types/`))
      .then((list) => setTypes(Array.isArray(list) ? list : []))
      .catch(() => setTypes([]));
  }, [projectId]);
  return types;
}

/**
 * A breakdown by an event, person or group property (PostHog's `breakdown_type`), or by a HogQL
 * expression; property names come from a searchable picker of the project's properties.
 */
export function BreakdownPicker({
  projectId,
  value,
  onChange,
  disabled,
  name,
}: {
  projectId: number;
  value: BreakdownChoice;
  onChange: (next: BreakdownChoice) => void;
  disabled?: boolean;
  name: string;
}) {
  const groupTypes = useGroupTypes(projectId);
  const type = value.breakdown_type ?? 'event';
  const offered = (Object.keys(BREAKDOWN_TYPES) as BreakdownType[]).filter((t) => t !== 'group' || groupTypes.length > 0 || type === 'group');
  return (
    <>
      <label>
        Breakdown by
        <select
          name={`${name}_type`}
          value={type}
          disabled={disabled}
          onChange={(e) => {
            const next = e.currentTarget.value as BreakdownType;
            onChange({
              breakdown: value.breakdown,
              breakdown_type: next === 'event' ? undefined : next,
              breakdown_group_type_index: next === 'group' ? (groupTypes[0]?.group_type_index ?? 0) : undefined,
            });
          }}
        >
          {offered.map((t) => (
            <option key={t} value={t}>
              {BREAKDOWN_TYPES[t]}
            </option>
          ))}
        </select>
      </label>
      {type === 'group' ? (
        <label>
          Group type
          <select
            name={`${name}_group_type`}
            value={String(value.breakdown_group_type_index ?? 0)}
            onChange={(e) => onChange({ ...value, breakdown_group_type_index: Number(e.currentTarget.value) })}
          >
            {groupTypes.map((g) => (
              <option key={g.group_type_index} value={String(g.group_type_index)}>
                {g.group_type}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {type === 'hogql' ? (
        <label>
          Breakdown expression
          <CommitInput
            name={name}
            value={value.breakdown}
            disabled={disabled}
            placeholder="e.g. properties.$browser"
            onCommit={(breakdown) => onChange({ ...value, breakdown })}
          />
        </label>
      ) : (
        <PropertyPicker
          projectId={projectId}
          type={type}
          name={name}
          label="Breakdown property"
          value={value.breakdown}
          disabled={disabled}
          placeholder="none"
          onCommit={(breakdown) => onChange({ ...value, breakdown })}
        />
      )}
    </>
  );
}
