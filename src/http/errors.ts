import type { FastifyError } from 'fastify';
import { TrellisError, toTrellisError } from '../platform/errors.js';
import { BODY_LIMIT } from '../platform/limits.js';

/** A TrellisError for whatever a route or Fastify itself (body parsing, limits) threw. */
export function fromFastifyError(error: FastifyError): TrellisError {
  if (error instanceof TrellisError) return error;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new TrellisError('PAYLOAD_TOO_LARGE', `Request body is larger than ${BODY_LIMIT} bytes`, { limit: BODY_LIMIT });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new TrellisError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new TrellisError('BAD_INPUT', 'Request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new TrellisError('BAD_INPUT', 'Request body is not valid JSON');
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new TrellisError('BAD_INPUT', error.message);
  }
  return toTrellisError(error);
}
