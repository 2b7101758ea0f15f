import { describe, expect, it } from "vitest";
import { isScrollIntent } from "./scroll-intent";

const key = (k: string, tagName = "BODY", isContentEditable = false) => ({ type: "keydown", key: k, target: { tagName, isContentEditable } });

describe("isScrollIntent", () => {
  it("counts the wheel, touch and the pointer", () => {
    for (const type of ["wheel", "touchmove", "pointerdown"]) expect(isScrollIntent({ type, target: null })).toBe(true);
  });

  it("counts the keys that scroll the page outside text fields", () => {
    for (const k of ["ArrowUp", "PageUp", "Home", " ", "End"]) expect(isScrollIntent(key(k))).toBe(true);
  });

  it("does not count typing: Enter in the prompt box, letters, keys in a text field or an editor", () => {
    expect(isScrollIntent(key("Enter", "TEXTAREA"))).toBe(false);
    expect(isScrollIntent(key("Enter"))).toBe(false);
    expect(isScrollIntent(key("a"))).toBe(false);
    expect(isScrollIntent(key("ArrowUp", "TEXTAREA"))).toBe(false);
    expect(isScrollIntent(key("PageUp", "input"))).toBe(false);
    expect(isScrollIntent(key(" ", "DIV", true))).toBe(false);
  });
});
