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
  /** The host closed our stdout (a write met EPIPE): nobody reads answers any more. */
  onoutputgone?: () => void;
  /** Takes a parsed line before it is checked and handed on; true when it answered it. */
  direct?: (message: unknown, send: (m: JSONRPCMessage) => Promise<void>) => boolean;

  private pending: Buffer | null = null;
  private started = false;
  /**
   * Requests read and not answered yet, by id: a server asked to stop answers them before it
   * exits (a claim whose push is on the wire gets its answer). A cancelled one gets none.
   */
  private readonly unanswered = new Set<string | number>();
  private whenAnswered: (() => void)[] = [];

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

  /** Other failures of stdout are the dispatcher's (git-handoff.ts): one line, exit 5. */
  private readonly onOutputError = (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") this.onoutputgone?.();
  };

  private handle(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (e) {
      this.onerror?.(e as Error);
      return;
    }
    // Counted before it is handed on: a direct call may be answered before take() returns.
    const id = this.expectAnswer(message);
    let checked: JSONRPCMessage;
    try {
      if (this.direct?.(message, (m) => this.send(m))) return;
      checked = JSONRPCMessageSchema.parse(message);
    } catch (e) {
      this.answered(id); // not a message: nothing will answer it
      this.onerror?.(e as Error);
      return;
    }
    try {
      this.onmessage?.(checked);
    } catch (e) {
      this.onerror?.(e as Error);
    }
  }

  /**
   * A request (a method and an id) is answered later: its id, now awaiting an answer. A cancel
   * means no answer will come.
   */
  private expectAnswer(m: unknown): string | number | undefined {
    if (typeof m !== "object" || m === null) return undefined;
    const { method, id, params } = m as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
    if (typeof method !== "string") return undefined;
    if (typeof id === "string" || typeof id === "number") {
      this.unanswered.add(id);
      return id;
    }
    if (method === "notifications/cancelled") this.answered(params?.requestId);
    return undefined;
  }

  private answered(id: unknown): void {
    if (!this.unanswered.delete(id as string | number) || this.unanswered.size) return;
    for (const resolve of this.whenAnswered.splice(0)) resolve();
  }

  /** How many requests wait for their answer. */
  get awaitingAnswer(): number {
    return this.unanswered.size;
  }

  /** Resolves once every request read so far has been answered (or cancelled). */
  allAnswered(): Promise<void> {
    return this.unanswered.size ? new Promise((resolve) => this.whenAnswered.push(resolve)) : Promise.resolve();
  }

  /** Reads no more requests (the server is stopping); answers still go out. */
  stopReading(): void {
    this.input.off("data", this.onData);
    this.input.off("error", this.onError);
    if (this.input.listenerCount("data") === 0) this.input.pause();
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("LineTransport already started");
    this.started = true;
    this.input.on("data", this.onData);
    this.input.on("error", this.onError);
    this.output.on("error", this.onOutputError);
  }

  async close(): Promise<void> {
    this.input.off("data", this.onData);
    this.input.off("error", this.onError);
    if (this.input.listenerCount("data") === 0) this.input.pause();
    this.pending = null;
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const answers = "id" in message && ("result" in message || "error" in message);
    return new Promise((resolve) => {
      // Nobody reads a closed stdout: the answer is dropped, and the stop goes on (stop-serving.ts).
      if (!this.output.writable || this.output.write(JSON.stringify(message) + "\n")) resolve();
      else {
        const written = () => {
          this.output.off("drain", written);
          this.output.off("close", written);
          resolve();
        };
        this.output.on("drain", written);
        this.output.on("close", written);
      }
      // Written (stdout to a pipe is written at once): a stopping server may exit now.
      if (answers) this.answered(message.id);
    });
  }
}
