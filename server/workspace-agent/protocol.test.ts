import { describe, expect, it } from "vitest";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { FileConflictError, WorktreeConflictError } from "@/server/shared/errors/workspace-errors";
import { decodeLine, encodeLine, errorFromWire, errorToWire, ZDoorAnswer, ZDoorError } from "./protocol";
import { scopeKey, ZDoorScope } from "./scope";

describe("the door's lines", () => {
  it("carry Buffers and Uint8Arrays as base64 and give Buffers back", () => {
    const line = encodeLine({ id: 1, ok: true, value: { a: Buffer.from([0, 1, 255]), b: new Uint8Array([7]), c: "text", d: [Buffer.from("x")] } });
    expect(line).not.toContain('"type":"Buffer"');
    const back = decodeLine(line) as { value: { a: Buffer; b: Buffer; c: string; d: Buffer[] } };
    expect(Buffer.isBuffer(back.value.a)).toBe(true);
    expect([...back.value.a]).toEqual([0, 1, 255]);
    expect([...back.value.b]).toEqual([7]);
    expect(back.value.c).toBe("text");
    expect(back.value.d[0]!.toString()).toBe("x");
  });

  it("leaves an object that merely has a $b64 key among others alone", () => {
    expect(decodeLine(JSON.stringify({ $b64: "eA==", other: 1 }))).toEqual({ $b64: "eA==", other: 1 });
  });

  it("refuses answers that are not one of the two envelopes", () => {
    expect(ZDoorAnswer.safeParse({ id: 1, ok: true }).success).toBe(false); // an answer always carries its value (null for none)
    expect(ZDoorAnswer.safeParse({ id: -1, ok: true, value: 1 }).success).toBe(false);
    expect(ZDoorAnswer.safeParse({ id: 1, ok: false, error: { kind: "app", code: "nope", message: "x" } }).success).toBe(false);
    expect(ZDoorAnswer.safeParse({ id: 1, ok: false, error: { kind: "app", code: "conflict", message: "x" } }).success).toBe(true);
  });
});

describe("errors across the door", () => {
  it("rebuild AppError with its code, message and details", () => {
    const back = errorFromWire(ZDoorError.parse(errorToWire(new AppError(ErrorCode.forbidden, "That path leads outside the workspace.", { a: 1 }))));
    expect(back).toBeInstanceOf(AppError);
    expect(back).toMatchObject({ code: "forbidden", message: "That path leads outside the workspace.", details: { a: 1 } });
  });

  it("rebuild FileConflictError with the file as it is now", () => {
    const current = { path: "a.txt", size: 3, version: "v", kind: "text" as const, content: "new" };
    const back = errorFromWire(ZDoorError.parse(errorToWire(new FileConflictError("a.txt", current))));
    expect(back).toBeInstanceOf(FileConflictError);
    expect((back as FileConflictError).current).toEqual(current);
    expect(back.message).toBe("a.txt changed on disk since you opened it.");
  });

  it("rebuild WorktreeConflictError with its files", () => {
    const back = errorFromWire(ZDoorError.parse(errorToWire(new WorktreeConflictError("stopped", ["a", "b"]))));
    expect(back).toBeInstanceOf(WorktreeConflictError);
    expect((back as WorktreeConflictError).conflicts).toEqual(["a", "b"]);
  });

  it("turn anything else into an internal error whose text is never the message", () => {
    const back = errorFromWire(ZDoorError.parse(errorToWire(new Error("EACCES: /secret/path"))));
    expect(back).toBeInstanceOf(AppError);
    expect((back as AppError).code).toBe("internal");
    expect(back.message).not.toContain("/secret/path");
  });
});

describe("door scopes", () => {
  it("accept absolute paths only", () => {
    expect(ZDoorScope.safeParse({ purpose: "files", workspace: { root: "/w/a", excluded: [] } }).success).toBe(true);
    expect(ZDoorScope.safeParse({ purpose: "files", workspace: { root: "w/a", excluded: [] } }).success).toBe(false);
    expect(ZDoorScope.safeParse({ purpose: "files", workspace: { root: "/w/../etc", excluded: [] } }).success).toBe(false);
    expect(ZDoorScope.safeParse({ purpose: "shell", workspace: { root: "/w/a", excluded: [] } }).success).toBe(false);
  });

  it("key the same scope the same way whatever the order of its nested workspaces", () => {
    const a = scopeKey({ purpose: "files", workspace: { root: "/w/a", excluded: ["/w/a/x", "/w/a/y"] } });
    expect(scopeKey({ purpose: "files", workspace: { root: "/w/a", excluded: ["/w/a/y", "/w/a/x"] } })).toBe(a);
    expect(scopeKey({ purpose: "git", workspace: { root: "/w/a", excluded: ["/w/a/y", "/w/a/x"] } })).not.toBe(a);
  });
});

describe("a file-system error that escaped an operation", () => {
  it("is said as the workspace changing, not as a server failure", () => {
    const gone = Object.assign(new Error("ENOENT: no such file or directory, scandir '/w/a/d'"), { code: "ENOENT" });
    const back = errorFromWire(ZDoorError.parse(errorToWire(gone)));
    expect(back).toMatchObject({ code: "not_found" });
    expect(back.message).not.toContain("/w/a");
    const swapped = Object.assign(new Error("ENOTDIR: not a directory"), { code: "ENOTDIR" });
    expect(errorFromWire(ZDoorError.parse(errorToWire(swapped)))).toMatchObject({ code: "conflict" });
  });

  it("keeps a long message within the envelope", () => {
    const long = new AppError(ErrorCode.conflict, "x".repeat(50_000));
    expect(ZDoorError.safeParse(errorToWire(long)).success).toBe(true);
  });
});
