/**
 * What the OpenAI-compatible providers differ on when a translator writes the chat-completions wire format for them.
 * They all speak `openai-chat`, but not the same members: Groq and Cerebras reject an assistant message carrying
 * `reasoning_content` with a 400 ("property 'reasoning_content' is unsupported") while DeepSeek requires it back
 * during a tool-use turn in thinking mode; Gemini 3 requires its thought signatures back on tool calls; OpenAI's
 * reasoning models refuse `max_tokens` and tool descriptions over 1,024 characters, and models without reasoning
 * refuse `reasoning_effort` (gpt-4o answers 400 "Unsupported parameter"; the model table says per model); Mistral
 * accepts only 9-character alphanumeric tool call ids; only OpenAI takes the `developer` role and Files API ids. Translators into `openai-chat` specialise by provider here and nowhere else;
 * an unknown or absent provider gets the conservative profile (members some providers reject are left out, and their
 * removal recorded by the translator).
 * Sources: https://api-docs.deepseek.com/guides/thinking_mode (reasoning_content in tool calls),
 * https://ai.google.dev/gemini-api/docs/thought-signatures (OpenAI compatibility: `extra_content.google`),
 * https://platform.openai.com/docs/api-reference/chat/create (`max_completion_tokens`, `file` parts, `developer`
 * messages), https://docs.mistral.ai/api/ (tool call ids, `prefix`), https://openrouter.ai/docs/api-reference/parameters
 * (`top_k`).
 */
import { acceptsReasoningEffort, getModelInfo, reasoningEffortFor, type ReasoningEffort } from '../../../shared/models.ts';

/** How one provider takes the members the chat wire format leaves open. */
export interface ChatTargetProfile {
  /** The output cap's member: `max_completion_tokens` (OpenAI, Azure: their reasoning models refuse `max_tokens`) or `max_tokens`. */
  readonly maxTokensMember: 'max_tokens' | 'max_completion_tokens';
  /** Earlier reasoning text sent back as the assistant message's `reasoning_content` (DeepSeek, OpenRouter); null: removed and recorded. */
  readonly reasoningEcho: 'reasoning_content' | null;
  /** Gemini thought signatures carried through the client (./carried-reasoning.ts) are put back as `extra_content.google.thought_signature`. */
  readonly thoughtSignatures: boolean;
  /** `top_k` is accepted (Together, Fireworks, OpenRouter); otherwise removed and recorded. */
  readonly topK: boolean;
  /** PDF documents as `file` content parts (`file_data`) are accepted (OpenAI, Azure, OpenRouter, or unknown: let the provider answer); otherwise a 400. */
  readonly fileParts: boolean;
  /** `file` parts and images may name an OpenAI Files API id (`file_id`): only OpenAI and Azure can resolve one. */
  readonly fileIds: boolean;
  /** Images are accepted (every provider here but DeepSeek, whose chat models are text only); otherwise a 400. */
  readonly images: boolean;
  /** A `developer` message is accepted as such (OpenAI); elsewhere it is sent as a `system` message, its equivalent. */
  readonly developerRole: boolean;
  /**
   * A final assistant message (prefill) is continued: `native` (OpenRouter, Ollama continue it as sent), `prefix-flag`
   * (Mistral: the message gets `prefix: true`), `none`: the provider cannot continue one.
   */
  readonly prefill: 'native' | 'prefix-flag' | 'none';
  /** Tool call ids must be 9 alphanumeric characters (Mistral): other ids are mapped to such a one, deterministically. */
  readonly alnum9ToolIds: boolean;
  /**
   * The longest `function.description` accepted, in characters (OpenAI and Azure refuse more than 1,024 with
   * `string_above_max_length`; Claude Code's tool descriptions run to 3,500); null: no limit known.
   */
  readonly toolDescriptionLimit: number | null;
}

const BASE: ChatTargetProfile = {
  maxTokensMember: 'max_tokens',
  reasoningEcho: null,
  thoughtSignatures: false,
  topK: false,
  fileParts: false,
  fileIds: false,
  images: true,
  developerRole: false,
  prefill: 'none',
  alnum9ToolIds: false,
  toolDescriptionLimit: null,
};

/** The profile of a request whose provider the caller did not name: conservative, but documents go through. */
export const UNKNOWN_PROFILE: ChatTargetProfile = { ...BASE, fileParts: true };

const PROFILES: Readonly<Record<string, ChatTargetProfile>> = {
  openai: { ...BASE, maxTokensMember: 'max_completion_tokens', fileParts: true, fileIds: true, developerRole: true, toolDescriptionLimit: 1024 },
  azure: { ...BASE, maxTokensMember: 'max_completion_tokens', fileParts: true, fileIds: true, toolDescriptionLimit: 1024 },
  deepseek: { ...BASE, reasoningEcho: 'reasoning_content', images: false },
  openrouter: { ...BASE, reasoningEcho: 'reasoning_content', topK: true, fileParts: true, prefill: 'native' },
  gemini: { ...BASE, thoughtSignatures: true },
  together: { ...BASE, topK: true },
  fireworks: { ...BASE, topK: true },
  mistral: { ...BASE, prefill: 'prefix-flag', alnum9ToolIds: true },
  ollama: { ...BASE, prefill: 'native' },
  groq: BASE,
  xai: BASE,
};

/** The profile of `provider` (config name); {@link UNKNOWN_PROFILE} when absent or not an OpenAI-compatible provider known here. */
export function chatTargetProfile(provider: string | undefined): ChatTargetProfile {
  return (provider !== undefined && PROFILES[provider]) || UNKNOWN_PROFILE;
}

/**
 * The largest completion `provider`'s `model` may produce (tokens), from the model table (shared/models.ts
 * `maxOutputTokens`); undefined when the provider is absent, the model unknown, or the table has no limit (0).
 */
export function outputTokenLimit(provider: string | undefined, model: string): number | undefined {
  if (provider === undefined) return undefined;
  const limit = getModelInfo(provider, model)?.maxOutputTokens;
  return limit && limit > 0 ? limit : undefined;
}

/**
 * Whether `provider`'s `model` takes `reasoning_effort` (shared/models.ts `acceptsReasoningEffort`): false when the
 * provider is absent, the model takes none, or the model table does not know it.
 */
export function acceptsChatReasoningEffort(provider: string | undefined, model: string): boolean {
  return provider !== undefined && acceptsReasoningEffort(provider, model) === true;
}

/**
 * The `reasoning_effort` to send `provider`'s `model` for the effort a client asked for (shared/models.ts
 * `reasoningEffortFor`: `wanted` when the model accepts it, else the nearest it accepts); null when the provider is
 * absent, or the model takes no reasoning effort or is not in the model table (gpt-4o, Llama and Mistral's models
 * answer 400 "Unsupported parameter" to the member), so that none is sent.
 */
export function chatReasoningEffort(provider: string | undefined, model: string, wanted: ReasoningEffort): ReasoningEffort | null {
  return provider === undefined ? null : reasoningEffortFor(provider, model, wanted);
}
