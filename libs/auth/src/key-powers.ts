import { hasScope, type Scope } from './scopes';

/**
 * What a personal API key may do: its scopes, and the projects (`scoped_teams`) and organisations
 * (`scoped_organizations`) it is restricted to. null (or absent): not restricted, which is more
 * than any list: it also reaches projects created later, and organisation-level routes.
 */
export interface KeyPowers {
  scopes: readonly string[];
  scopedTeams: readonly number[] | null;
  scopedOrganizations?: readonly string[] | null;
}

/**
 * The first power `target` holds that `holder` does not, as a phrase for an error message
 * ("the scope 'x'", "project 3", ...), or null when `holder` holds all of `target`'s powers.
 * A key holds a scope through `*`, or a read scope through its write scope; `*` only through `*`.
 */
export function powerBeyond(holder: KeyPowers, target: KeyPowers): string | null {
  for (const scope of target.scopes) {
    const held = scope === '*' ? holder.scopes.includes('*') : hasScope(holder.scopes, scope as Scope);
    if (!held) return `the scope '${scope}'`;
  }
  const teams = holder.scopedTeams;
  if (teams !== null) {
    if (target.scopedTeams === null) return 'access to every project';
    const outside = target.scopedTeams.find((id) => !teams.includes(id));
    if (outside !== undefined) return `project ${outside}`;
  }
  const organizations = holder.scopedOrganizations ?? null;
  if (organizations !== null) {
    const wanted = target.scopedOrganizations ?? null;
    if (wanted === null) return 'access to every organization';
    const held = new Set(organizations.map((id) => id.toLowerCase()));
    const outside = wanted.find((id) => !held.has(id.toLowerCase()));
    if (outside !== undefined) return `organization ${outside}`;
  }
  return null;
}

/** Whether `holder` holds every power of `target` (see powerBeyond). */
export function holdsPowersOf(holder: KeyPowers, target: KeyPowers): boolean {
  return powerBeyond(holder, target) === null;
}
