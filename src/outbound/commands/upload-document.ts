import { z } from 'zod';
import { UPLOAD_DOCUMENT_TYPES } from '../../api/spec-enums.js';
import { id, oneOf, text } from './field-values.js';

/**
 * Upload a load document (`POST /loads/document`, multipart). The file comes either from `file`,
 * a path relative to the inbox file that carries the request (local inboxes), or from
 * `file_base64` with `file_name` (any source, e.g. a JSON inbox or a staging-table payload).
 * `documentType` must be exactly one of the §2.7 upload names.
 */
export const uploadDocumentSchema = z
  .strictObject({
    documentType: oneOf(UPLOAD_DOCUMENT_TYPES),
    file: text().optional(),
    file_base64: text().optional(),
    file_name: text().optional(),
    content_type: text().optional(),
    customerId: id().optional(),
  })
  .superRefine((body, ctx) => {
    if (body.file === undefined && body.file_base64 === undefined) {
      ctx.addIssue({ code: 'custom', path: ['file'], message: 'is required (a path relative to the inbox file, or file_base64 with file_name)' });
    }
    if (body.file !== undefined && body.file_base64 !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['file_base64'], message: 'give either file or file_base64, not both' });
    }
    if (body.file_base64 !== undefined && body.file_name === undefined) {
      ctx.addIssue({ code: 'custom', path: ['file_name'], message: 'is required with file_base64' });
    }
    if (body.file_base64 !== undefined && !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(body.file_base64)) {
      ctx.addIssue({ code: 'custom', path: ['file_base64'], message: 'is not valid base64' });
    }
  });

