import {
  chainHrefSql,
  chainTextsSql,
  compilePropertyGroup,
  containsPattern,
  propertyPresentSql,
  propertyTextSql,
  selectorMatchSql,
  tagNameMatchSql,
  type CompileContext,
} from '@sightline/properties';
import { stepPropertyGroup, type ActionDefinition, type ActionStep, type TextMatching } from './action-steps';

/** The events-table columns an action reads. */
export interface ActionColumns {
  event: string;
  properties: string;
  elementsChain: string;
}

/** PostHog's autocapture event: the only one whose steps' element conditions apply. */
const AUTOCAPTURE_EVENT = '$autocapture';

/** An element text or href against the step's value, as PostHog's steps_to_expr compares them. */
function elementValueMatch(expression: string, value: string, mode: TextMatching | null | undefined, ctx: CompileContext): string {
  if (mode === 'regex') return `match(${expression}, ${ctx.params.add(value, 'String')})`;
  if (mode === 'contains') return `${expression} ILIKE ${ctx.params.add(containsPattern(value), 'String')}`;
  return `${expression} = ${ctx.params.add(value, 'String')}`;
}

function stepMatch(step: ActionStep, columns: ActionColumns, ctx: CompileContext): string {
  const p = ctx.params;
  const parts: string[] = [];
  if (step.event) parts.push(`${columns.event} = ${p.add(step.event, 'String')}`);
  if (step.event === AUTOCAPTURE_EVENT) {
    const chain = columns.elementsChain;
    if (step.selector) parts.push(selectorMatchSql(chain, step.selector, p));
    if (step.tag_name !== null && step.tag_name !== undefined) parts.push(tagNameMatchSql(chain, step.tag_name, p));
    if (step.href !== null && step.href !== undefined) parts.push(elementValueMatch(chainHrefSql(chain), step.href, step.href_matching, ctx));
    if (step.text !== null && step.text !== undefined) {
      parts.push(`arrayExists(element_text -> ${elementValueMatch('element_text', step.text, step.text_matching, ctx)}, ${chainTextsSql(chain)})`);
    }
  }
  if (step.url) {
    const key = p.add('$current_url', 'String');
    const url = propertyTextSql(columns.properties, key);
    if (step.url_matching === 'exact') parts.push(`${url} = ${p.add(step.url, 'String')}`);
    // A missing URL is NULL in PostHog, which no pattern matches.
    else if (step.url_matching === 'regex') parts.push(`(${propertyPresentSql(columns.properties, key)} AND match(${url}, ${p.add(step.url, 'String')}))`);
    // "contains" (and no matching at all) is PostHog's case-sensitive LIKE; `%` and `_` in the
    // URL are taken literally, as property filters take them.
    else parts.push(`${url} LIKE ${p.add(containsPattern(step.url), 'String')}`);
  }
  const properties = stepPropertyGroup(step);
  if (properties.values.length > 0) parts.push(compilePropertyGroup(properties, ctx));
  if (parts.length === 0) return '1';
  return parts.length === 1 ? parts[0]! : `(${parts.join(' AND ')})`;
}

/** Whether the second argument is the query's compile context (the current call shape). */
const isCompileContext = (value: CompileContext | ActionColumns): value is CompileContext => 'params' in value;

/**
 * SQL for "this events row matches the action" (PostHog's action_to_expr): any of its steps,
 * each the AND of its event name, URL, element (for `$autocapture`) and property conditions;
 * a step with no condition matches every event. Every value is bound through `ctx.params`.
 * An action without steps matches nothing (PostHog would match every event).
 *
 * Columns: `event`; the URL from `ctx.propertiesColumn` for event properties; the chain from
 * `ctx.elementsChainColumn`, else `elements_chain`. `columns` overrides any of them.
 */
export function compileActionMatch(action: ActionDefinition, ctx: CompileContext, columns?: Partial<ActionColumns>): string;
/** @deprecated The call shape before the compile context came first; kept for callers not yet moved. */
export function compileActionMatch(action: ActionDefinition, columns: ActionColumns, ctx: CompileContext): string;
export function compileActionMatch(action: ActionDefinition, second: CompileContext | ActionColumns, third?: CompileContext | Partial<ActionColumns>): string {
  const ctx = isCompileContext(second) ? second : (third as CompileContext);
  const given: Partial<ActionColumns> = isCompileContext(second) ? ((third as Partial<ActionColumns> | undefined) ?? {}) : second;
  const columns: ActionColumns = {
    event: given.event ?? 'event',
    properties: given.properties ?? ctx.propertiesColumn({ key: '$current_url', type: 'event' }) ?? 'properties',
    elementsChain: given.elementsChain ?? ctx.elementsChainColumn ?? 'elements_chain',
  };
  if (action.steps.length === 0) return '0';
  // Element filters inside the steps' properties read the same chain.
  const stepCtx: CompileContext =
    ctx.elementsChainColumn === columns.elementsChain
      ? ctx
      : Object.assign(Object.create(ctx) as CompileContext, { elementsChainColumn: columns.elementsChain });
  return `(${action.steps.map((step) => stepMatch(step, columns, stepCtx)).join(' OR ')})`;
}
