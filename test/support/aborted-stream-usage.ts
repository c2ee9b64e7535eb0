/**
 * What test/support/aborted-stream-stub.ts reports, for the test that drives it: kept apart from the stub, since
 * importing the stub's module starts its server (a listening socket that kept the test process from exiting).
 */

/** The usage Anthropic's `message_start` of the stub reports (input side known, output just begun), in tokens. */
export const MESSAGE_START_USAGE = { input_tokens: 37, cache_creation_input_tokens: 0, cache_read_input_tokens: 5, output_tokens: 1 };
