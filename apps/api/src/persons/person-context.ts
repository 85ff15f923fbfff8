import type { Request, RequestHandler } from 'express';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import type { PersonsActor } from './person-changes.service';
import { parsePersonRef } from './persons-input';

import type { ListedPerson } from './person.serializer';
import { findPersonByRef } from '@sightline/persons';

declare module 'express-serve-static-core' {
  interface Request {
    person?: ListedPerson;
  }
}

/** Loads the project's person `:person_id` names (its uuid or integer id) into `req.person`, else answers 400 or 404. */
export function loadPerson(db: Sql): RequestHandler {
  return async (req, _res, next) => {
    const raw = String(req.params['person_id']);
    const ref = parsePersonRef(raw);
    if (ref === null) {
      return next(
        errors.validation(
          `The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=${raw} instead.`,
          null,
          'invalid',
        ),
      );
    }
    req.person = (await findPersonByRef(db, req.project!.id, ref)) ?? undefined;
    next(req.person ? undefined : errors.notFound());
  };
}

export const actorOf = (req: Request): PersonsActor => ({
  teamId: req.project!.id,
  organizationId: req.project!.organization_id,
  userId: req.principal!.userId,
  displayProperties: req.project!.person_display_name_properties,
});

/** The project's display-name properties, which name persons in answers. */
export const displayPropertiesOf = (req: Request): readonly string[] | null => req.project!.person_display_name_properties;
