import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Markdown, parseBlocks, safeHref } from "./markdown";

const html = (text: string) => renderToStaticMarkup(<Markdown text={text} />);

describe("Markdown", () => {
  it("renders the common blocks", () => {
    const out = html(
      "# Title\n\nSome **bold** and *em* and `code`.\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted\n\n---\n\n| a | b |\n|---|--:|\n| 1 | 2 |",
    );
    expect(out).toContain("<h3");
    expect(out).toContain("<strong>bold</strong>");
    expect(out).toContain("<em>em</em>");
    expect(out).toContain("<code");
    expect(out).toMatch(/<ul[^>]*><li[^>]*>one<\/li><li[^>]*>two<\/li><\/ul>/);
    expect(out).toContain("<ol");
    expect(out).toContain("<blockquote");
    expect(out).toContain("<hr");
    expect(out).toContain("<table");
  });

  it("highlights fenced code and keeps an unclosed fence (still streaming) as code", () => {
    const out = html("```ts\nconst x = 1; // one\n```");
    expect(out).toMatch(/<span class="[^"]*violet[^"]*">const<\/span>/);
    expect(out).toContain("// one");
    expect(parseBlocks("text\n```py\nprint('hi')")).toEqual([
      { type: "paragraph", text: "text" },
      { type: "code", lang: "py", code: "print('hi')" },
    ]);
  });

  it("never lets model output add markup or unsafe links", () => {
    const out = html(
      "<script>alert(1)</script> <img src=x onerror=alert(1)> [click](javascript:alert(1)) [ok](https://example.com)",
    );
    expect(out).not.toContain("<script");
    expect(out).not.toContain("<img");
    expect(out).not.toContain('href="javascript');
    expect(out).toContain('href="https://example.com"');
    expect(out).toContain('rel="noopener noreferrer nofollow"');
    expect(safeHref("JaVaScRiPt:alert(1)")).toBeUndefined();
    expect(safeHref("data:text/html,x")).toBeUndefined();
  });

  it("leaves snake_case and lone asterisks alone", () => {
    const out = html("use my_var_name and 2 * 3 * 4");
    expect(out).not.toContain("<em>");
  });
});
