import { describe, expect, it } from "vitest";
import { approvalKeyAction } from "./approval-keys";

const press = (key: string, extra: Partial<Parameters<typeof approvalKeyAction>[0]> = {}) =>
  approvalKeyAction({ key, defaultPrevented: false, ctrlKey: false, metaKey: false, altKey: false, target: null, ...extra });

describe("approvalKeyAction", () => {
  it("maps the inbox's keys", () => {
    expect(press("a")).toBe("allow");
    expect(press("d")).toBe("deny");
    expect(press("D")).toBe("message");
    expect(press("j")).toBe("next");
    expect(press("k")).toBe("previous");
  });

  it("leaves other keys, chords and handled presses alone", () => {
    expect(press("x")).toBeUndefined();
    expect(press("Enter")).toBeUndefined();
    expect(press("A")).toBeUndefined();
    expect(press("a", { ctrlKey: true })).toBeUndefined();
    expect(press("a", { metaKey: true })).toBeUndefined();
    expect(press("d", { altKey: true })).toBeUndefined();
    expect(press("d", { defaultPrevented: true })).toBeUndefined();
  });
});
