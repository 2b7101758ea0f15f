import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { CodeBlock } from "./highlight";
import { shikiLanguageOf } from "./highlight-languages";
import { highlight } from "./shiki-highlighter";

describe("CodeBlock", () => {
  it("first renders the code as plain, escaped text with its language label", () => {
    const out = renderToStaticMarkup(<CodeBlock lang="html" code={'<script>alert("x")</script>'} />);
    expect(out).toContain(">html</div>");
    expect(out).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(out).not.toContain("<script");
  });
});

describe("shikiLanguageOf", () => {
  it("maps fence tags to the grammars it loads, and nothing else", () => {
    expect(shikiLanguageOf("ts")).toBe("typescript");
    expect(shikiLanguageOf("Bash")).toBe("shellscript");
    expect(shikiLanguageOf("yml")).toBe("yaml");
    expect(shikiLanguageOf("")).toBeUndefined();
    expect(shikiLanguageOf("brainfuck")).toBeUndefined();
    expect(shikiLanguageOf("constructor")).toBeUndefined();
  });
});

describe("highlight (shiki)", () => {
  it("colours keywords, strings and comments for both colour schemes, keeping the text intact", async () => {
    const code = 'const x = "hi"; // one\nexport function f() {}';
    const lines = await highlight(code, "typescript");
    expect(lines.map((line) => line.map((t) => t.content).join("")).join("\n")).toBe(code);
    const colourOf = (text: string) => lines.flat().find((t) => t.content === text)?.style.color;
    expect(colourOf("const")).toMatch(/^light-dark\(#[0-9A-F]{6}, #[0-9A-F]{6}\)$/i);
    expect(colourOf("// one")).toBeDefined();
    expect(colourOf("const")).not.toBe(colourOf("// one"));
    expect(colourOf("const")).not.toBe(colourOf(" "));
  });

  it("loads further grammars on demand", async () => {
    const lines = await highlight("def f():\n    return None", "python");
    expect(lines).toHaveLength(2);
    expect(lines[0]!.find((t) => t.content === "def")?.style.color).toMatch(/^light-dark\(/);
  });
});
