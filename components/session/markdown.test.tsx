import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Markdown, safeHref, streamingBlocks } from "./markdown";

const html = (text: string) => renderToStaticMarkup(<Markdown text={text} />);

describe("Markdown", () => {
  it("renders the common blocks", () => {
    const out = html(
      "# Title\n\nSome **bold** and *em* and `code`.\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted\n\n---\n",
    );
    expect(out).toContain("<h3");
    expect(out).toContain("<strong>bold</strong>");
    expect(out).toContain("<em>em</em>");
    expect(out).toMatch(/<code class="[^"]*font-mono[^"]*">code<\/code>/);
    expect(out).toMatch(/<ul class="list-disc[^"]*">\s*<li[^>]*>one<\/li>\s*<li[^>]*>two<\/li>\s*<\/ul>/);
    expect(out).toContain("<ol");
    expect(out).toContain("<blockquote");
    expect(out).toContain("<hr");
  });

  it("renders GFM tables with their alignment", () => {
    const out = html("| name | cost |\n|:-----|-----:|\n| ada | 1 |\n| bob | 22 |");
    expect(out).toContain("<table");
    expect(out).toMatch(/<th style="text-align:left"[^>]*>name<\/th>/);
    expect(out).toMatch(/<th style="text-align:right"[^>]*>cost<\/th>/);
    expect(out.match(/<td/g)).toHaveLength(4);
    expect(out).toMatch(/<td style="text-align:right"[^>]*>22<\/td>/);
  });

  it("renders GFM task lists as checkboxes, strikethrough and bare URLs as links", () => {
    const out = html("- [x] done\n- [ ] open\n\n~~gone~~ see https://example.com/a");
    const boxes = out.match(/<input[^>]*type="checkbox"[^>]*>/g) ?? [];
    expect(boxes).toHaveLength(2);
    expect(boxes[0]).toContain('checked=""');
    expect(boxes[0]).toContain('disabled=""');
    expect(boxes[1]).not.toContain("checked");
    expect(out).not.toContain("list-disc");
    expect(out).toContain("<del>gone</del>");
    expect(out).toContain('href="https://example.com/a"');
  });

  it("renders half-streamed text: an open code fence and half a table", () => {
    const fence = html("Here:\n\n```py\nprint('hi')\nfor x in");
    expect(fence).toContain("<pre");
    expect(fence).toContain("print(&#x27;hi&#x27;)\nfor x in");
    expect(fence).toContain(">py</div>");
    const table = html("| a | b |\n|---|-");
    expect(table).not.toContain("<td");
    const rows = html("| a | b |\n|---|---|\n| 1 |");
    expect(rows).toContain("<table");
    expect(rows).toMatch(/<td[^>]*>1<\/td>/);
    for (let i = 0; i <= 60; i++) {
      expect(() =>
        html("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [ ] x\n\n```ts\nconst a = 1;\n```".slice(0, i)),
      ).not.toThrow();
    }
  });

  it("shows raw HTML from the model as text, never as markup", () => {
    const out = html('<script>alert(1)</script>\n\ntext <img src=x onerror="alert(1)"> and <b>bold?</b>');
    expect(out).not.toMatch(/<script/i);
    expect(out).not.toMatch(/<img/i);
    expect(out).not.toContain("<b>");
    expect(out).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(out).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
  });

  it("opens links in a new tab without opener or referrer and drops unsafe targets", () => {
    const out = html(
      "[ok](https://example.com) [click](javascript:alert(1)) [mail](mailto:a@b.c) ![pic](https://example.com/p.png)",
    );
    expect(out).toMatch(/<a href="https:\/\/example.com" target="_blank" rel="noopener noreferrer"[^>]*>ok<\/a>/);
    expect(out).not.toMatch(/href="javascript/i);
    expect(out).toContain("</a> click <a");
    expect(out).toContain('href="mailto:a@b.c"');
    // images are not fetched; they become a link
    expect(out).not.toContain("<img");
    expect(out).toMatch(/<a href="https:\/\/example.com\/p.png"[^>]*>\[image: pic\]<\/a>/);
    expect(safeHref("JaVaScRiPt:alert(1)")).toBeUndefined();
    expect(safeHref("data:text/html,x")).toBeUndefined();
    expect(safeHref("#top")).toBe("#top");
  });

  it("leaves snake_case and lone asterisks alone", () => {
    const out = html("use my_var_name and 2 * 3 * 4");
    expect(out).not.toContain("<em>");
  });

  describe("while streaming", () => {
    it("cuts finished blocks at blank lines, and not inside a code fence, an indented continuation or a list", () => {
      const text = [
        "# Plan",
        "",
        "First paragraph",
        "still the first.",
        "",
        "```ts",
        "const a = 1;",
        "",
        "const b = 2;",
        "```",
        "",
        "- one",
        "",
        "  more of one",
        "",
        "- two",
        "",
        "1. first",
        "",
        "Growing para",
      ].join("\n");
      const { done, rest } = streamingBlocks(text);
      expect(done).toEqual([
        "# Plan",
        "First paragraph\nstill the first.",
        "```ts\nconst a = 1;\n\nconst b = 2;\n```",
        "- one\n\n  more of one\n\n- two\n\n1. first",
      ]);
      expect(rest).toBe("Growing para");
    });

    it("keeps an open fence in the growing block, blank lines and all", () => {
      const { done, rest } = streamingBlocks("Intro\n\n~~~\nline\n\nNot a block\n");
      expect(done).toEqual(["Intro"]);
      expect(rest).toBe("~~~\nline\n\nNot a block\n");
      // a blank line with no block after it yet leaves the text growing
      expect(streamingBlocks("One\n\n")).toEqual({ done: [], rest: "One\n\n" });
    });

    it("renders the same blocks as the finished text", () => {
      const text = "# Title\n\nSome **bold** text.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nx()\n\ny()\n```\n\nlast <b>words</b>";
      const streamed = renderToStaticMarkup(<Markdown text={text} streaming />);
      // the same elements; only the newlines react-markdown puts between blocks (not shown) differ
      expect(streamed).toBe(html(text).replace(/>\n</g, "><"));
      expect(streamed).not.toContain("<b>");
    });
  });
});
