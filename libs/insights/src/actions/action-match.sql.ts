import { compilePropertyGroup, type CompileContext } from '@sightline/properties';
import { stepPropertyGroup, type ActionDefinition, type ActionStep } from './action-steps';
import { chainSelectorMatch, chainTagMatch, chainValueMatch } from './elements-chain.sql';

/** The columns of the events row an action matches. */
export interface ActionColumns {
  event: string;
  properties: string;
  elementsChain: string;
}

function stepMatch(step: ActionStep, columns: ActionColumns, ctx: CompileContext): string {
  const p = ctx.params;
  const parts: string[] = [];
  if (step.event) parts.push(`${columns.event} = ${p.add(step.event, 'String')}`);
  if (step.url) {
    const url = `JSONExtractString(${columns.properties}, '$current_url')`;
    const value = p.add(step.url_matching === 'contains' ? `%${step.url.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : step.url, 'String');
    parts.push(step.url_matching === 'exact' ? `${url} = ${value}` : step.url_matching === 'regex' ? `match(${url}, ${value})` : `${url} LIKE ${value}`);
  }
  if (step.selector) parts.push(chainSelectorMatch(columns.elementsChain, step.selector, p));
  if (step.tag_name) parts.push(chainTagMatch(columns.elementsChain, step.tag_name, p));
  if (step.text) parts.push(chainValueMatch(columns.elementsChain, 'text', step.text, step.text_matching ?? 'exact', p));
  if (step.href) parts.push(chainValueMatch(columns.elementsChain, 'href', step.href, step.href_matching ?? 'exact', p));
  const properties = stepPropertyGroup(step);
  if (properties.values.length > 0) parts.push(compilePropertyGroup(properties, ctx));
  return parts.length ? `(${parts.join(' AND ')})` : '1';
}

/**
 * SQL for "this event matches the action": any of its steps, each the AND of its event name,
 * URL, element and property conditions (PostHog's action_to_expr). An action without steps
 * matches nothing.
 */
export function compileActionMatch(action: ActionDefinition, columns: ActionColumns, ctx: CompileContext): string {
  if (action.steps.length === 0) return '0';
  return `(${action.steps.map((step) => stepMatch(step, columns, ctx)).join(' OR ')})`;
}
