import { describe, expect, it } from "vitest";
import type { FileReview, NotebookCellReview } from "@/server/shared/wire/approval";
import { approvedReviewText, isReviewEditable, reviewBadge, reviewLanguage, reviewTitle } from "./file-review-display";

function review(fields: Partial<FileReview> = {}): FileReview {
  return { filePath: "/ws/nb.ipynb", original: "a\n", proposed: "b\n", hunks: [], ...fields };
}

function cell(fields: Partial<NotebookCellReview> = {}): NotebookCellReview {
  return { editMode: "replace", index: 0, label: 'cell "cell-a" · code', language: "python", ...fields };
}

describe("file review display", () => {
  it("a notebook cell is edited in the cell's language, a file in its path's", () => {
    expect(reviewLanguage(review({ cell: cell() }))).toBe("python");
    expect(reviewLanguage(review({ cell: cell({ language: "markdown" }) }))).toBe("markdown");
    expect(reviewLanguage(review())).toBe("json");
    expect(reviewLanguage(review({ filePath: "/ws/a.ts" }))).toBe("typescript");
  });

  it("only a deleted cell is not editable", () => {
    expect(isReviewEditable(review())).toBe(true);
    expect(isReviewEditable(review({ cell: cell() }))).toBe(true);
    expect(isReviewEditable(review({ cell: cell({ editMode: "insert" }), original: null }))).toBe(true);
    expect(isReviewEditable(review({ cell: cell({ editMode: "delete" }), proposed: "" }))).toBe(false);
  });

  it("badges: new file, new cell, deleted cell", () => {
    expect(reviewBadge(review())).toBeUndefined();
    expect(reviewBadge(review({ original: null }))).toBe("new file");
    expect(reviewBadge(review({ original: null, cell: cell({ editMode: "insert" }) }))).toBe("new cell");
    expect(reviewBadge(review({ cell: cell({ editMode: "delete" }) }))).toBe("deleted cell");
    expect(reviewBadge(review({ cell: cell() }))).toBeUndefined();
  });

  it("the title names the cell of a notebook review", () => {
    expect(reviewTitle(review({ cell: cell() }))).toBe('/ws/nb.ipynb · cell "cell-a" · code');
    expect(reviewTitle(review({ filePath: "/ws/a.ts" }))).toBe("/ws/a.ts");
    // relative to the workspace when inside it; in full when outside
    expect(reviewTitle(review({ filePath: "/ws/src/a.ts" }), "/ws")).toBe("src/a.ts");
    expect(reviewTitle(review({ filePath: "/etc/hosts" }), "/ws")).toBe("/etc/hosts");
    expect(reviewTitle(review({ filePath: "/ws2/a.ts" }), "/ws")).toBe("/ws2/a.ts");
  });

  it("a decided card shows the text the tool got: new_source for NotebookEdit, content for Write", () => {
    expect(approvedReviewText("NotebookEdit", { notebook_path: "/ws/nb.ipynb", new_source: "mine" })).toBe("mine");
    expect(approvedReviewText("Write", { file_path: "/ws/a", content: "text" })).toBe("text");
    expect(approvedReviewText("Edit", { file_path: "/ws/a", old_string: "a", new_string: "b" })).toBeUndefined();
    expect(approvedReviewText("NotebookEdit", null)).toBeUndefined();
  });
});
