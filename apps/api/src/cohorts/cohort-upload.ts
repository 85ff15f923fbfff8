import type { RequestHandler } from 'express';
import multer from 'multer';
import { errors } from '@sightline/http';
import { formBody } from './cohort-input';

/** A CSV upload's size limit, the JSON body limit of /api. */
const MAX_CSV_BYTES = 5 * 1024 * 1024;

/**
 * PostHog's static cohort upload: a multipart body with the CSV in `csv`, read into memory
 * (bounded) only for requests that are multipart; other fields arrive as text.
 */
const csvUpload = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: MAX_CSV_BYTES, files: 1, fields: 20, fieldSize: 1024 * 1024, parts: 21 },
}).single('csv');

/** Reads a multipart cohort body (fields into req.body, the CSV into req.file); other bodies pass through. */
export const readCohortUpload: RequestHandler = (req, res, next) => {
  csvUpload(req, res, (error: unknown) => {
    if (!error) {
      try {
        if (req.is('multipart/form-data')) req.body = formBody({ ...(req.body as Record<string, unknown>) });
      } catch (refused) {
        return next(refused);
      }
      return next();
    }
    if (error instanceof multer.MulterError) {
      if (error.code === 'LIMIT_FILE_SIZE') return next(errors.payloadTooLarge(MAX_CSV_BYTES));
      if (error.code === 'LIMIT_UNEXPECTED_FILE') return next(errors.validation('Only one file, named csv, may be uploaded.', error.field ?? 'csv', 'invalid'));
      return next(errors.validation(`The upload was refused: ${error.message}.`, error.field ?? null, 'invalid'));
    }
    // busboy's own errors: a truncated or malformed multipart body.
    next(errors.parse(`Malformed request data: ${(error as Error).message}`));
  });
};
