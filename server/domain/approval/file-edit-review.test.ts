import { describe, expect, it } from "vitest";
import { ZPermissionDecision } from "@/server/shared/claude-protocol/encode";
import { allowRequest } from "./answers";
import {
  applyCliEdit,
  applyCliWrite,
  buildReviewedInput,
  detectLineEndings,
  type EditInput,
  proposeFileChange,
  type ReviewedInput,
  ZEditInput,
} from "./file-edit-review";
import { applyHunkSelection, diffHunks } from "./hunks";
import { createRandom, randomEdit, randomText } from "./test-random";

const FILE = "/ws/target.txt";

function edit(old_string: string, new_string: string, replace_all = false): EditInput {
  return { file_path: FILE, old_string, new_string, replace_all };
}

function applied(disk: string | null, input: EditInput): string {
  const out = applyCliEdit(disk, input);
  if (!out.ok) throw new Error(out.problem);
  return out.text;
}

function reviewedEdit(disk: string | null, input: EditInput, reviewed: string): ReviewedInput {
  return buildReviewedInput({ toolName: "Edit", input, disk, reviewed });
}

/** The reviewed input, applied with the CLI's rules: must give the reviewed text back. */
function roundTrip(disk: string | null, input: EditInput, reviewed: string): EditInput {
  const result = reviewedEdit(disk, input, reviewed);
  if (!result.ok) throw new Error(`${result.code}: ${result.problem}`);
  const updated = ZEditInput.parse(result.updatedInput);
  expect(applied(disk, updated)).toBe(reviewed);
  expect(ZPermissionDecision.safeParse(allowRequest({ tool_name: "Edit", input }, result.updatedInput)).success).toBe(
    true,
  );
  return updated;
}

describe("applyCliEdit (the CLI's Edit semantics)", () => {
  it("replaces the one occurrence", () => {
    expect(applied("alpha\nbeta\n", edit("alpha", "ALPHA"))).toBe("ALPHA\nbeta\n");
  });

  it("refuses an ambiguous old_string without replace_all, and replaces all with it", () => {
    const out = applyCliEdit("x = 1\nx = 1\n", edit("x = 1", "x = 2"));
    expect(out).toEqual({ ok: false, problem: expect.stringContaining("Found 2 matches") });
    expect(applied("x = 1\nx = 1\n", edit("x = 1", "x = 2", true))).toBe("x = 2\nx = 2\n");
  });

  it("like the CLI, does not count an overlapping repeat as a second match", () => {
    expect(applied("aaa", edit("aa", "b"))).toBe("ba");
  });

  it("reports a missing old_string and an edit that changes nothing", () => {
    expect(applyCliEdit("abc", edit("zzz", "y"))).toEqual({
      ok: false,
      problem: "String to replace not found in file.\nString: zzz",
    });
    expect(applyCliEdit("abc", edit("b", "b")).ok).toBe(false);
  });

  it("creates a missing file only with an empty old_string", () => {
    expect(applied(null, edit("", "new\n"))).toBe("new\n");
    expect(applyCliEdit(null, edit("x", "y")).ok).toBe(false);
  });

  it("fills an empty or blank file with an empty old_string, refuses it on a file with text", () => {
    expect(applied("", edit("", "hello"))).toBe("hello");
    expect(applied("  \n", edit("", "hello"))).toBe("hello");
    expect(applyCliEdit("text", edit("", "hello"))).toEqual({
      ok: false,
      problem: "Cannot create new file - file already exists.",
    });
  });

  it("edits CRLF files in LF and writes them back in CRLF", () => {
    expect(detectLineEndings("a\r\nb\r\n")).toBe("CRLF");
    expect(applied("a\r\nb\r\n", edit("a\nb", "x\ny\nz"))).toBe("x\r\ny\r\nz\r\n");
  });

  it("loses stray CRLFs of a mostly-LF file, as the CLI does", () => {
    expect(detectLineEndings("a\r\nb\nc\n")).toBe("LF");
    expect(applied("a\r\nb\nc\n", edit("c", "C"))).toBe("a\nb\nC\n");
  });

  it("takes the line break along when deleting a whole line's text", () => {
    expect(applied("a\nxyz\nb\n", edit("xyz", ""))).toBe("a\nb\n");
    expect(applied("a xyz b", edit("xyz", ""))).toBe("a  b");
  });

  it("matches curly quotes and keeps their style in the new text", () => {
    expect(applied("say \u201chi\u201d now", edit('say "hi"', 'say "bye"'))).toBe("say \u201cbye\u201d now");
    expect(applied("it\u2019s here", edit("it's", "it's not"))).toBe("it\u2019s not here");
  });

  it("never reads $ patterns in new_string", () => {
    expect(applied("price", edit("price", "$& $1 $$"))).toBe("$& $1 $$");
  });

  it("refuses notebooks", () => {
    expect(applyCliEdit("{}", { ...edit("{", "["), file_path: "/ws/a.ipynb" }).ok).toBe(false);
  });
});

describe("applyCliWrite", () => {
  it("writes content as sent, line endings included", () => {
    expect(applyCliWrite("old\r\n", { file_path: FILE, content: "new\nlines\n" })).toBe("new\nlines\n");
    expect(applyCliWrite(null, { file_path: FILE, content: "a\r\n" })).toBe("a\r\n");
  });

  it("keeps the existing file's byte-order mark", () => {
    expect(applyCliWrite("\uFEFFold", { file_path: FILE, content: "new" })).toBe("\uFEFFnew");
    expect(applyCliWrite("\uFEFFold", { file_path: FILE, content: "" })).toBe("");
  });
});

describe("proposeFileChange", () => {
  it("Edit: the file against the file with the replacement applied", () => {
    expect(proposeFileChange("Edit", edit("beta", "BETA"), "alpha\nbeta\n")).toEqual({
      ok: true,
      tool: "Edit",
      filePath: FILE,
      exists: true,
      original: "alpha\nbeta\n",
      proposed: "alpha\nBETA\n",
    });
  });

  it("Edit: respects replace_all", () => {
    const p = proposeFileChange("Edit", edit("a", "b", true), "a a a");
    expect(p.ok && p.proposed).toBe("b b b");
  });

  it("Write: old content or empty against content", () => {
    expect(proposeFileChange("Write", { file_path: FILE, content: "x\n" }, null)).toMatchObject({
      ok: true,
      exists: false,
      original: "",
      proposed: "x\n",
    });
    expect(proposeFileChange("Write", { file_path: FILE, content: "x\n" }, "old\n")).toMatchObject({
      original: "old\n",
      proposed: "x\n",
    });
  });

  it("reports a problem instead of a wrong diff", () => {
    expect(proposeFileChange("Edit", edit("x", "y"), "a x x")).toMatchObject({
      ok: false,
      filePath: FILE,
      problem: expect.stringContaining("Found 2 matches"),
    });
    expect(proposeFileChange("Write", { file_path: FILE }, null)).toMatchObject({
      ok: false,
      problem: expect.stringContaining("content"),
    });
  });
});

describe("buildReviewedInput: Edit", () => {
  const disk = "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n";
  const model = edit("  return 1;", "  return 10;");

  it("sends the model's input untouched when the reviewed text is the proposal", () => {
    const proposed = applied(disk, model);
    expect(reviewedEdit(disk, model, proposed)).toEqual({
      ok: true,
      updatedInput: model,
      strategy: "as-proposed",
      userModified: false,
    });
  });

  it("rewrites to the smallest unique span around the approver's change", () => {
    const reviewed = disk.replace("return 1;", "return 42; // reviewed");
    const updated = roundTrip(disk, model, reviewed);
    expect(updated).toMatchObject({ old_string: "1;", new_string: "42; // reviewed", replace_all: false });
  });

  it("keeps extra input fields and always turns replace_all off", () => {
    const input = { ...edit("return", "yield", true), extra: 1 };
    const result = reviewedEdit(disk, input, disk.replace("return 2", "return 3"));
    expect(result).toMatchObject({ ok: true, strategy: "span", updatedInput: { extra: 1, replace_all: false } });
  });

  it("grows the span with context lines until it is unique", () => {
    const repeated = "x\ny\nx\ny\nz\nx\ny\n";
    const reviewed = "x\ny\nx\nY\nz\nx\ny\n";
    const updated = roundTrip(repeated, edit("z", "Z"), reviewed);
    expect(updated.old_string).toBe("y\nz\n");
    expect(updated.new_string).toBe("Y\nz\n");
  });

  it("uses the whole file when no smaller span is unique", () => {
    const result = reviewedEdit("x\nx\n", edit("x\nx\n", "y"), "x\nx\nx\n");
    expect(result).toMatchObject({ ok: true, strategy: "whole-file" });
    expect(applied("x\nx\n", ZEditInput.parse(result.ok && result.updatedInput))).toBe("x\nx\nx\n");
  });

  it("avoids the CLI's line-break-eating deletion", () => {
    const updated = roundTrip("a\nxyz\nb\n", edit("xyz", "XYZ"), "a\n\nb\n");
    expect(updated).toMatchObject({ old_string: "xyz\n", new_string: "\n" });
  });

  it("creates missing and fills empty files with an empty old_string", () => {
    expect(roundTrip(null, edit("", "proposed\n"), "reviewed\n")).toMatchObject({
      old_string: "",
      new_string: "reviewed\n",
    });
    expect(roundTrip("", edit("", "proposed\n"), "reviewed\n")).toMatchObject({
      old_string: "",
      new_string: "reviewed\n",
    });
  });

  it("refuses a review that changes nothing (the CLI refuses a no-op Edit): deny instead", () => {
    expect(reviewedEdit(disk, model, disk)).toMatchObject({ ok: false, code: "no-change" });
  });

  it("writes CRLF files through LF spans, and refuses reviewed text with bare LF in a CRLF file", () => {
    const crlf = "one\r\ntwo\r\nthree\r\n";
    const updated = roundTrip(crlf, edit("two", "2"), "one\r\nTWO\r\nadded\r\nthree\r\n");
    expect(updated.old_string).not.toContain("\r");
    expect(reviewedEdit(crlf, edit("two", "2"), "one\r\nTWO\nthree\r\n")).toMatchObject({
      ok: false,
      code: "line-endings",
    });
  });

  it("never splits a surrogate pair", () => {
    const updated = roundTrip("a😀b\n", edit("a", "b"), "a😁b\n");
    expect(updated.old_string).toBe("😀");
    expect(updated.new_string).toBe("😁");
  });

  it("reports an input that is not an Edit input", () => {
    expect(
      buildReviewedInput({ toolName: "Edit", input: { file_path: FILE }, disk: "a", reviewed: "b" }),
    ).toMatchObject({
      ok: false,
      code: "invalid-input",
    });
  });
});

describe("buildReviewedInput: Write", () => {
  it("sends content = the reviewed text", () => {
    const input = { file_path: FILE, content: "proposed\n" };
    expect(buildReviewedInput({ toolName: "Write", input, disk: null, reviewed: "proposed\n" })).toEqual({
      ok: true,
      updatedInput: input,
      strategy: "as-proposed",
      userModified: false,
    });
    const result = buildReviewedInput({ toolName: "Write", input, disk: "old\r\n", reviewed: "reviewed\r\nx" });
    expect(result).toEqual({
      ok: true,
      updatedInput: { file_path: FILE, content: "reviewed\r\nx" },
      strategy: "content",
      userModified: true,
    });
  });

  it("allows writing the file unchanged, and refuses dropping a byte-order mark the CLI keeps", () => {
    const input = { file_path: FILE, content: "new" };
    expect(buildReviewedInput({ toolName: "Write", input, disk: "old", reviewed: "old" })).toMatchObject({ ok: true });
    expect(buildReviewedInput({ toolName: "Write", input, disk: "\uFEFFold", reviewed: "other" })).toMatchObject({
      ok: false,
      code: "byte-order-mark",
    });
  });
});

describe("property: apply(original, updatedInput) === reviewed", () => {
  type Style = "lf" | "crlf" | "mixed";

  function diskFor(seed: number): { disk: string; style: Style } {
    const r = createRandom(seed);
    const style = r.pick<Style>(["lf", "lf", "crlf", "mixed"]);
    const disk = randomText(r, { crlf: style === "mixed" ? undefined : style === "crlf", maxLines: 14 });
    return { disk, style };
  }

  it("random hand edits of the proposal (LF, CRLF, mixed endings, unicode, repeated lines)", () => {
    let spans = 0;
    for (let seed = 1; seed <= 1500; seed++) {
      const r = createRandom(seed * 7919);
      const { disk, style } = diskFor(seed);
      const eol = style === "crlf" ? "\r\n" : "\n";
      const reviewed = randomEdit(r, disk, eol);
      const result = reviewedEdit(disk, edit("unused", "model"), reviewed);
      const ctx = `seed ${seed} (${style}) ${JSON.stringify(disk)} -> ${JSON.stringify(reviewed)}`;
      if (!result.ok) {
        // The only refusals: nothing to change (for the CLI's LF view), or LF in a CRLF file.
        const normalized = detectLineEndings(disk) === "CRLF" ? reviewed.replaceAll("\r\n", "\n") : reviewed;
        const noChange = normalized === disk.replaceAll("\r\n", "\n");
        expect(result.code === "no-change" ? noChange : result.code === "line-endings", ctx).toBe(true);
        continue;
      }
      const updated = ZEditInput.parse(result.updatedInput);
      expect(applied(disk, updated), ctx).toBe(reviewed);
      expect(updated.replace_all, ctx).toBe(false);
      if (result.strategy === "span") spans++;
    }
    // Most reviews are expressed as a span, not a whole-file replacement.
    expect(spans).toBeGreaterThan(800);
  });

  it("model edits with some hunks rejected", () => {
    for (let seed = 1; seed <= 800; seed++) {
      const r = createRandom(seed * 104729);
      const disk = randomText(r, { crlf: r.bool(0.2), maxLines: 14 });
      const normalized = disk.replaceAll("\r\n", "\n");
      if (normalized === "") continue;
      // A model Edit: replace one whole line that occurs once.
      const lines = normalized
        .split("\n")
        .filter((l) => l !== "" && normalized.indexOf(l) === normalized.lastIndexOf(l));
      if (lines.length === 0) continue;
      const target = r.pick(lines);
      const model = edit(target, `${target} changed\nplus a line`);
      const proposal = proposeFileChange("Edit", model, disk);
      if (!proposal.ok) continue;
      const hunks = diffHunks(proposal.original, proposal.proposed);
      const reviewed = applyHunkSelection(
        proposal.original,
        proposal.proposed,
        hunks.filter(() => r.bool()).map((h) => h.id),
      );
      const result = reviewedEdit(disk, model, reviewed);
      const ctx = `seed ${seed}`;
      if (reviewed === disk || reviewed.replaceAll("\r\n", "\n") === normalized) {
        expect(result.ok, ctx).toBe(false);
        continue;
      }
      if (!result.ok) {
        // Rejecting hunks of a CRLF file can only mix line endings at the file's end.
        expect(result.code, ctx).toBe("line-endings");
        continue;
      }
      expect(applied(disk, ZEditInput.parse(result.updatedInput)), ctx).toBe(reviewed);
    }
  });

  it("Write: any reviewed text round-trips", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = createRandom(seed);
      const disk = r.bool(0.3) ? null : randomText(r);
      const reviewed = randomEdit(r, disk ?? "");
      const input = { file_path: FILE, content: randomText(r) };
      const result = buildReviewedInput({ toolName: "Write", input, disk, reviewed });
      expect(result.ok).toBe(true);
      if (result.ok)
        expect(applyCliWrite(disk, result.updatedInput as { file_path: string; content: string })).toBe(reviewed);
    }
  });
});
