// The frames of an Anthropic Messages stream with one text block, for the benches that serve such
// a stream from a local server of their own.

/** One server-sent event: its name and its JSON data. */
export function sseFrame(event: string, data: object): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** What comes before the text: `message_start`, then the opening of text block 0. */
export const STREAM_START =
  sseFrame('message_start', {
    type: 'message_start',
    message: { model: 'm', usage: { input_tokens: 1, output_tokens: 1 } },
  }) +
  sseFrame('content_block_start', {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'text', text: '' },
  });

/** What comes after the text: the end of text block 0, then of the message (`end_turn`). */
export const STREAM_END =
  sseFrame('content_block_stop', { type: 'content_block_stop', index: 0 }) +
  sseFrame('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: 'end_turn' },
    usage: { output_tokens: 2 },
  }) +
  sseFrame('message_stop', { type: 'message_stop' });
