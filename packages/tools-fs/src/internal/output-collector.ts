/**
 * Keeps the first and last bytes of a stream of any length in bounded memory: `headLimit` bytes
 * from the start, a ring of `tailLimit` bytes from the end, and a count of what was dropped
 * between them.
 */
export class OutputCollector {
  private readonly head: Buffer;
  private headLength = 0;
  private readonly tail: Buffer;
  private tailStart = 0;
  private tailLength = 0;
  /** Bytes seen in total. */
  totalBytes = 0;

  constructor(
    private readonly headLimit: number,
    private readonly tailLimit: number,
  ) {
    this.head = Buffer.alloc(headLimit);
    this.tail = Buffer.alloc(tailLimit);
  }

  /** Adds a chunk; only copies what can still be shown. */
  push(chunk: Uint8Array): void {
    this.totalBytes += chunk.byteLength;
    let data = chunk;
    if (this.headLength < this.headLimit) {
      const take = Math.min(this.headLimit - this.headLength, data.byteLength);
      this.head.set(data.subarray(0, take), this.headLength);
      this.headLength += take;
      data = data.subarray(take);
    }
    if (data.byteLength === 0 || this.tailLimit === 0) return;
    if (data.byteLength >= this.tailLimit) {
      this.tail.set(data.subarray(data.byteLength - this.tailLimit));
      this.tailStart = 0;
      this.tailLength = this.tailLimit;
      return;
    }
    for (let offset = 0; offset < data.byteLength;) {
      const writeAt = (this.tailStart + this.tailLength) % this.tailLimit;
      const room = Math.min(this.tailLimit - writeAt, data.byteLength - offset);
      this.tail.set(data.subarray(offset, offset + room), writeAt);
      offset += room;
      const grown = this.tailLength + room;
      if (grown > this.tailLimit) {
        this.tailStart = (this.tailStart + grown - this.tailLimit) % this.tailLimit;
        this.tailLength = this.tailLimit;
      } else {
        this.tailLength = grown;
      }
    }
  }

  /** Bytes dropped between head and tail. */
  get omittedBytes(): number {
    return this.totalBytes - this.headLength - this.tailLength;
  }

  /** The kept text (UTF-8 with replacement), with a marker where bytes were dropped. */
  text(): string {
    const head = this.head.subarray(0, this.headLength);
    const tailEnd = this.tailStart + this.tailLength;
    const tail =
      tailEnd <= this.tailLimit
        ? this.tail.subarray(this.tailStart, tailEnd)
        : Buffer.concat([this.tail.subarray(this.tailStart), this.tail.subarray(0, tailEnd - this.tailLimit)]);
    if (this.omittedBytes === 0) return Buffer.concat([head, tail]).toString('utf8');
    return `${head.toString('utf8')}\n\n[... ${this.omittedBytes} bytes of output omitted ...]\n\n${tail.toString('utf8')}`;
  }
}
