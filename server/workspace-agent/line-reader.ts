/**
 * Splits a stream of text into lines without rescanning what it already looked at: each chunk
 * is searched for a newline once, and a long line is joined once, when it ends (a 5 MB answer
 * arrives in ~80 chunks; searching the growing buffer each time made reading it quadratic).
 */
export class LineReader {
  private parts: string[] = [];
  private size = 0;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineChars: number,
    private readonly onTooLong: () => void,
  ) {}

  push(chunk: string): void {
    let start = 0;
    let nl = chunk.indexOf("\n");
    while (nl !== -1) {
      const tail = chunk.slice(start, nl);
      const line = this.parts.length === 0 ? tail : this.parts.join("") + tail;
      this.parts = [];
      this.size = 0;
      this.onLine(line);
      start = nl + 1;
      nl = chunk.indexOf("\n", start);
    }
    if (start < chunk.length) {
      this.parts.push(start === 0 ? chunk : chunk.slice(start));
      this.size += chunk.length - start;
      if (this.size > this.maxLineChars) {
        this.parts = [];
        this.size = 0;
        this.onTooLong();
      }
    }
  }
}
