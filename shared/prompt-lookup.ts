/**
 * The 404 messages of a managed-prompt lookup (admin/prompt-store.ts writes them, the proxy answers
 * them to its client) and the request member each one is about, so the client's error names
 * `prompt_id`, `version_id` or `environment` rather than always `prompt_id`. The control plane's
 * `prompt.result` carries only the message, hence the fixed first word.
 */

/** The request member a prompt lookup can find unknown. */
export type PromptLookupMember = 'prompt_id' | 'version_id' | 'environment';

/** `prompt "<id>" not found`. */
export function promptNotFound(promptId: string): string {
  return `prompt ${JSON.stringify(promptId)} not found`;
}

/** `version "<id>" not found in prompt <id>`. */
export function versionNotFound(versionId: string, promptId: string): string {
  return `version ${JSON.stringify(versionId)} not found in prompt ${promptId}`;
}

/** `environment "<name>" not found in prompt <id>`. */
export function environmentNotFound(environment: string, promptId: string): string {
  return `environment ${JSON.stringify(environment)} not found in prompt ${promptId}`;
}

/** The member a 404 message written by the functions above is about (`prompt_id` for any other text). */
export function unknownPromptMember(message: string): PromptLookupMember {
  if (message.startsWith('version ')) return 'version_id';
  if (message.startsWith('environment ')) return 'environment';
  return 'prompt_id';
}
