import { describe, expect, it } from "vitest";
import { encodeHistoryCursor } from "@/server/db/session-history";
import { AppError } from "@/server/shared/errors/app-error";
import { parseSessionListQuery, sessionListWhere } from "./session-list-query";

const parse = (query: string) => parseSessionListQuery(new URLSearchParams(query));

describe("the session list query", () => {
  it("defaults to active sessions, 50 a page", () => {
    expect(parse("")).toEqual({ archived: "active", limit: 50 });
    expect(parse("status=live&archived=all&creator=u1&q=%20zebra%20&limit=10")).toEqual({
      status: "live",
      archived: "all",
      creator: "u1",
      q: "zebra",
      limit: 10,
    });
  });

  it("refuses bad values naming the field", () => {
    expect(() => parse("status=sleeping")).toThrow(AppError);
    expect(() => parse("status=sleeping")).toThrow(/status/);
    expect(() => parse("limit=1000")).toThrow(/limit/);
    expect(() => parse("archived=maybe")).toThrow(/archived/);
    expect(() => parse("cursor=garbage")).toThrow(/cursor/);
  });

  it("builds one where: never deleted, archived by choice, words matched in search text or title", () => {
    const cursor = encodeHistoryCursor(new Date("2026-11-01T00:00:00Z"), "s9");
    const where = sessionListWhere("w1", { archived: "archived", status: "ended", creator: "u1", q: "Zebra", cursor });
    expect(where.AND).toEqual([
      { workspaceId: "w1" },
      { deletedAt: null },
      { archivedAt: { not: null } },
      { status: { in: ["stopped", "crashed", "dead"] } },
      { createdById: "u1" },
      {
        OR: [{ searchText: { contains: "zebra" } }, { title: { contains: "Zebra" } }, { title: { contains: "zebra" } }],
      },
      {
        OR: [
          { createdAt: { lt: new Date("2026-11-01T00:00:00Z") } },
          { createdAt: new Date("2026-11-01T00:00:00Z"), id: { lt: "s9" } },
        ],
      },
    ]);
    expect(sessionListWhere("w1", {}).AND).toEqual([{ workspaceId: "w1" }, { deletedAt: null }, { archivedAt: null }]);
    expect(sessionListWhere("w1", { archived: "all" }).AND).toEqual([{ workspaceId: "w1" }, { deletedAt: null }]);
  });
});
