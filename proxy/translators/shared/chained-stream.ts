/**
 * Two stream translators run one after the other as one Transform, for a translator built from two others (a client
 * dialect reaching a wire format through OpenAI chat completions: Responses → chat → Anthropic Messages). Each output
 * piece of the first is written to the second as it comes, and the second's output is pushed as it comes, so the
 * chain stays a stream, event by event; it ends when the second has flushed what the first's end gave it, or when
 * the second ended early (a failed translation). An error of
 * either destroys the chain with that error. Used only on translated paths (it allocates listeners per response).
 */
import { Transform, type TransformCallback } from 'node:stream';

class ChainedStream extends Transform {
  constructor(
    private readonly first: Transform,
    private readonly second: Transform,
  ) {
    super();
    first.on('data', (piece: Buffer) => second.write(piece));
    first.on('end', () => second.end());
    second.on('data', (piece: Buffer) => this.push(piece));
    // The second ends before the chain's input does when a translation failed mid-stream (./translator-stream.ts):
    // the chain's output ends with it.
    second.on('end', () => this.push(null));
    first.on('error', (err: Error) => this.destroy(err));
    second.on('error', (err: Error) => this.destroy(err));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.first.write(chunk);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.second.readableEnded) return callback();
    this.second.once('end', () => callback());
    this.first.end();
  }
}

/** One Transform whose input goes through `first`, then `second` (both fresh, owned by the chain from now on). */
export function chainStreams(first: Transform, second: Transform): Transform {
  return new ChainedStream(first, second);
}
