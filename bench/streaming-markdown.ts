/**
 * What a streamed reply's deltas cost the session page's Markdown (issue #13 items 6 and 7): the
 * whole text so far parsed again on every delta (the page before 2026-12-02) against the text cut
 * into blocks, the finished ones parsed once (`streamingBlocks`). A reply of ~9,000 characters
 * (paragraphs, lists, code blocks with blank lines) arriving 20 characters at a time, rendered to
 * HTML in Node, no browser: the browser also skips reconciling the finished blocks' unchanged
 * elements, which this server render does not, so it understates the gain.
 *
 * Last line: `streaming-markdown: chars=… deltas=… whole_ms=… blocks_ms=… last_delta_whole_ms=… last_delta_blocks_ms=…`.
 */
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { Markdown } from "../components/session/markdown";

const paragraph = "Some **bold** text with `code` and a [link](https://example.com) and more words to fill the line. ";

function reply(): string {
  let text = "";
  for (let i = 0; i < 40; i++) {
    if (i % 7 === 3) text += "```ts\nconst x = " + i + ";\n\nfoo(x);\n```\n\n";
    else if (i % 5 === 0) text += `- item ${i}\n- item b\n\n`;
    else text += paragraph.repeat(3) + "\n\n";
  }
  return text;
}

/** Renders every prefix of `text` `step` characters apart; total ms and the last delta's ms. */
function stream(text: string, step: number, streaming: boolean): { totalMs: number; lastMs: number; deltas: number } {
  const started = performance.now();
  let lastMs = 0;
  let deltas = 0;
  for (let end = step; end <= text.length; end += step) {
    const t = performance.now();
    renderToStaticMarkup(createElement(Markdown, { text: text.slice(0, end), streaming }));
    lastMs = performance.now() - t;
    deltas++;
  }
  return { totalMs: performance.now() - started, lastMs, deltas };
}

export async function run(): Promise<void> {
  const text = reply();
  // each way twice, the second counted (the first warms the parser's code paths)
  stream(text.slice(0, 2000), 20, false);
  stream(text.slice(0, 2000), 20, true);
  const whole = stream(text, 20, false);
  const blocks = stream(text, 20, true);
  console.log(`streaming-markdown: a ${text.length}-character reply in ${whole.deltas} deltas of 20 characters`);
  console.log(`  whole text parsed on every delta: ${whole.totalMs.toFixed(0)} ms in all, the last delta ${whole.lastMs.toFixed(1)} ms`);
  console.log(`  finished blocks parsed once:      ${blocks.totalMs.toFixed(0)} ms in all, the last delta ${blocks.lastMs.toFixed(1)} ms`);
  console.log(
    `streaming-markdown: chars=${text.length} deltas=${whole.deltas} whole_ms=${whole.totalMs.toFixed(0)} blocks_ms=${blocks.totalMs.toFixed(0)} ` +
      `last_delta_whole_ms=${whole.lastMs.toFixed(1)} last_delta_blocks_ms=${blocks.lastMs.toFixed(1)}`,
  );
}

export default run;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
