import type { RequestHandler } from 'express';
import { errors } from '@sightline/http';
import {
  ActionStepError,
  findAction,
  findActionByName,
  insertAction,
  listActions,
  parseActionSteps,
  updateAction,
  type ActionInput,
  type ActionRow,
} from '@sightline/insights';
import { isUniqueViolation, type Sql } from '@sightline/postgres';
import { parseBody, parseBoolean, parseList, parseString, queryInteger } from '../http/drf-fields';
import { booleanField, charField, listField, objectBody } from '../http/body-fields';
import { limitOffsetPage } from '../http/pagination';
import { loadById } from '../http/load-by-id';
import { RouteTable } from '../http/route-registry';
import { serializeActions } from './action.serializer';

declare module 'express-serve-static-core' {
  interface Request {
    action?: ActionRow;
  }
}

/** PostHog's Action.name max_length, and the tag bound flags use. */
const MAX_NAME_LENGTH = 400;
const MAX_TAG_LENGTH = 255;

function parseActionInput(body: Record<string, unknown>): ActionInput {
  const input: ActionInput = {};
  if (body['name'] !== undefined) input.name = parseString(body['name'], 'name', { maxLength: MAX_NAME_LENGTH });
  if (body['description'] !== undefined) input.description = parseString(body['description'], 'description', { allowBlank: true, maxLength: 65_535 });
  if (body['tags'] !== undefined)
    input.tags = [...new Set(parseList(body['tags'], 'tags').map((t, i) => parseString(t, `tags__${i}`, { maxLength: MAX_TAG_LENGTH })))];
  if (body['post_to_slack'] !== undefined) input.post_to_slack = parseBoolean(body['post_to_slack'], 'post_to_slack');
  if (body['slack_message_format'] !== undefined)
    input.slack_message_format = parseString(body['slack_message_format'], 'slack_message_format', { allowBlank: true, maxLength: 1_200 });
  if (body['deleted'] !== undefined) input.deleted = parseBoolean(body['deleted'], 'deleted');
  if (body['steps'] !== undefined) {
    try {
      input.steps = parseActionSteps(parseList(body['steps'], 'steps'));
    } catch (error) {
      if (error instanceof ActionStepError) throw errors.validation(error.message, error.attr, error.code);
      throw error;
    }
  }
  return input;
}

const actionFields = {
  name: charField(),
  description: charField(),
  tags: listField(charField()),
  post_to_slack: booleanField,
  slack_message_format: charField(),
  deleted: booleanField,
  steps: listField(
    undefined,
    'Steps, each an object matching events by event, properties, url and url_matching, selector, tag_name, text (and their _matching)',
  ),
};
const createActionBody = objectBody(actionFields, ['name']);
const changeActionBody = objectBody(actionFields);

/** Actions under `/api/projects/:project_id/actions/` (and `/api/environments/…`). */
export function createActionsRoutes(db: Sql): RouteTable {
  const routes = new RouteTable();
  const loadAction = loadById('action_id', 'action', (teamId, id) => findAction(db, teamId, id));
  const nameTaken = (other: number | null) =>
    errors.validation(`This project already has an action with this name${other === null ? '' : `, ID ${other}`}`, 'name', 'unique');
  const uniqueName = async (teamId: number, name: string, exceptId: number | null) => {
    const other = await findActionByName(db, teamId, name, exceptId);
    if (other !== null) throw nameTaken(other);
  };
  /** A write that lost a race for its name (the database's partial unique index) answers as the check does. */
  const writeNamed = async <T>(teamId: number, name: string | undefined, exceptId: number | null, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } catch (error) {
      if (!isUniqueViolation(error, 'actions_team_live_name')) throw error;
      throw nameTaken(name === undefined ? null : await findActionByName(db, teamId, name, exceptId));
    }
  };

  routes.inProject((project) => {
    const base = '/actions';
    const read = { scope: 'action:read' } as const;
    const write = { scope: 'action:write' } as const;

    project.get(base, { ...read, summary: 'List actions', list: true }, async (req, res) => {
      const limit = queryInteger(req.query['limit'], 100, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const search = typeof req.query['search'] === 'string' && req.query['search'] !== '' ? req.query['search'] : null;
      const { rows, count } = await listActions(db, req.project!.id, { limit, offset, search });
      res.json(limitOffsetPage(req, { count, limit, offset, results: await serializeActions(db, rows) }));
    });

    project.post(
      base,
      { ...write, summary: 'Create an action', body: createActionBody, example: () => ({ name: 'Signed up', steps: [{ event: 'signup' }] }) },
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        if (body['name'] === undefined) throw errors.validation('This field is required.', 'name', 'required');
        const input = parseActionInput(body);
        await uniqueName(req.project!.id, input.name!, null);
        const action = await writeNamed(req.project!.id, input.name, null, () => insertAction(db, req.project!.id, input, req.principal!.userId));
        res.status(201).json((await serializeActions(db, [action]))[0]);
      },
    );

    project.get(`${base}/:action_id`, { ...read, summary: 'Retrieve an action' }, loadAction, async (req, res) => {
      res.json((await serializeActions(db, [req.action!]))[0]);
    });

    const update: RequestHandler = async (req, res) => {
      const input = parseActionInput(parseBody(req.body ?? {}));
      if (input.name !== undefined) await uniqueName(req.project!.id, input.name, req.action!.id);
      // Undeleting (deleted: false) can also meet a live action of the same name.
      const name = input.name ?? req.action!.name;
      const action = await writeNamed(req.project!.id, name, req.action!.id, () => updateAction(db, req.project!.id, req.action!.id, input));
      res.json((await serializeActions(db, [action!]))[0]);
    };
    project.patch(
      `${base}/:action_id`,
      { ...write, summary: 'Update an action', body: changeActionBody, example: () => ({ description: 'changed' }) },
      loadAction,
      update,
    );
    project.put(
      `${base}/:action_id`,
      { ...write, summary: 'Replace an action', body: changeActionBody, example: () => ({ name: 'Replaced action' }) },
      loadAction,
      update,
    );

    // PostHog forbids hard deletes of actions, whichever id is named: PATCH {"deleted": true} removes one.
    project.delete(`${base}/:action_id`, { ...write, summary: 'Refused: PATCH {"deleted": true} removes an action' }, () => {
      throw errors.methodNotAllowed('DELETE');
    });
  });
  return routes;
}
