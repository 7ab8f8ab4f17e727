import type { ErrorObject } from 'ajv';

/** Standalone validator compiled from schemas/agent.schema.json (see schemas/generate-validators.mjs). */
export interface GeneratedValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}
export declare const validate: GeneratedValidator;
export default validate;
