// The MCP server's stdio transport: one JSON-RPC message per line on stdin and stdout, as the
// SDK's StdioServerTransport (1.32) frames them. Ours so that a line is parsed once and a plain
// tool call (direct-calls.ts) is answered before the SDK's check of every message against the
// union of all JSON-RPC schemas; every other message is checked exactly as the SDK's transport
// checks it (JSONRPCMessageSchema) and handed to the SDK. A line that is not JSON, or not a
// message, is reported to onerror and skipped, as there.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The SDK's bound on a line not yet ended (STDIO_DEFAULT_MAX_BUFFER_SIZE). */
const MAX_BUFFERED = 10 * 1024 * 1024;

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Takes a parsed line before it is checked and handed on; true when it answered it. */
  direct?: (message: unknown, send: (m: JSONRPCMessage) => Promise<void>) => boolean;

  private pending: Buffer | null = null;
  private started = false;

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
  ) {}

  private readonly onData = (chunk: Buffer) => {
    const size = (this.pending?.length ?? 0) + chunk.length;
    if (size > MAX_BUFFERED) {
      this.pending = null;
      this.onerror?.(new Error(`ReadBuffer exceeded maximum size of ${MAX_BUFFERED} bytes`));
      void this.close();
      return;
    }
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
      const end = nl > 0 && buf[nl - 1] === 13 ? nl - 1 : nl;
      const line = buf.toString("utf8", 0, end);
      buf = buf.subarray(nl + 1);
      this.handle(line);
    }
    this.pending = buf.length ? buf : null;
  };

  private readonly onError = (e: Error) => this.onerror?.(e);

  private handle(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (e) {
      this.onerror?.(e as Error);
      return;
    }
    try {
      if (this.direct?.(message, (m) => this.send(m))) return;
      this.onmessage?.(JSONRPCMessageSchema.parse(message));
    } catch (e) {
      this.onerror?.(e as Error);
    }
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("LineTransport already started");
    this.started = true;
    this.input.on("data", this.onData);
    this.input.on("error", this.onError);
  }

  async close(): Promise<void> {
    this.input.off("data", this.onData);
    this.input.off("error", this.onError);
    if (this.input.listenerCount("data") === 0) this.input.pause();
    this.pending = null;
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(JSON.stringify(message) + "\n")) resolve();
      else this.output.once("drain", resolve);
    });
  }
}
