/**
 * Dawn (the WebGPU implementation) logs from native code straight to the process's stderr: on every adapter
 * `Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced ...` (and the storage twin; Mesa's GL
 * and NVIDIA's Vulkan both report more than Dawn supports), and where Mesa's Vulkan drivers are installed a
 * `Warning: ... - While initializing adapter (backend=BackendType::Vulkan)` record for each one it turns away,
 * although the run then works. Neither the `webgpu` package's `create()` flags nor Dawn's toggles turn that
 * logging off, and JavaScript cannot redirect file descriptor 2 of its own process; so a process that wants a clean
 * stderr runs the GPU work in a child whose stderr goes through this filter (what the CLI does).
 *
 * A Dawn record is a line starting `Warning: ` or `Error: ` (Vixen writes lowercase `warning:`/`error:`) and its
 * continuation lines (` - While ...` context, `    at Function (file.cpp:123)` locations). Only records known to be
 * harmless are dropped: the limit reductions above and adapters turned away while initializing.
 */

const RECORD_START = /^(Warning|Error): /;
const CONTINUATION = /^( - While |\s+at .*\(.*:\d+\)$)/;
/** First lines of records that never matter to a Vixen user. */
const KNOWN_HARMLESS = /^Warning: maxDynamic(Uniform|Storage)BuffersPerPipelineLayout artificially reduced from \d+ to \d+/;
/** Context lines of records about an adapter Dawn turned away (another adapter then runs the program). */
const ADAPTER_REJECTED = /^ - While initializing adapter \(backend=/;

/** Filters Dawn's known noise out of a stream of stderr text, passing everything else through unchanged. */
export class DawnNoiseFilter {
  /** Lines of a Dawn record not yet known to be noise. */
  private held: string[] = [];
  /** The last text written ended inside a line (a progress line, a prompt): what follows belongs to it. */
  private midLine = false;
  /** A record was just dropped: its continuation lines, and one blank line after it, go too. */
  private dropping = false;

  constructor(private readonly write: (text: string) => void) {}

  /**
   * Takes the next piece of stderr. Dawn writes each record with one `write` (far below a pipe's atomic size), so a
   * record never spans two pieces; a piece's unfinished last line is passed on at once.
   */
  push(text: string): void {
    const parts = text.split('\n');
    const last = parts.pop()!;
    for (const line of parts) this.line(line);
    this.settle();
    if (last.length > 0) {
      this.dropping = false;
      this.write(last);
      this.midLine = true;
    }
  }

  /** Passes on whatever is still held (at the end of the stream). */
  end(): void {
    this.settle();
  }

  private line(line: string): void {
    if (this.midLine) {
      this.midLine = false;
      this.write(line + '\n');
      return;
    }
    if (this.dropping && (CONTINUATION.test(line) || line === '')) {
      if (line === '') this.dropping = false;
      return;
    }
    this.dropping = false;
    if (this.held.length > 0 && CONTINUATION.test(line)) {
      this.held.push(line);
      if (ADAPTER_REJECTED.test(line)) this.drop();
      return;
    }
    this.settle();
    if (KNOWN_HARMLESS.test(line)) this.dropping = true;
    else if (RECORD_START.test(line)) this.held = [line];
    else this.write(line + '\n');
  }

  private drop(): void {
    this.held = [];
    this.dropping = true;
  }

  /** The held record is not known noise: pass it on. */
  private settle(): void {
    if (this.held.length === 0) return;
    this.write(this.held.map((l) => l + '\n').join(''));
    this.held = [];
  }
}
