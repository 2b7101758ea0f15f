import { describe, expect, it } from "vitest";
import { reportToCsv, type Report } from "@/server/db/cost-reports";
import { AppError } from "@/server/shared/errors/app-error";
import { parseReportParams } from "./reports";

describe("parseReportParams", () => {
  it("fills in the current UTC month, day and user", () => {
    const params = parseReportParams(new URLSearchParams());
    expect(params.groupBy).toBe("day");
    expect(params.by).toBe("user");
    expect(params.from).toMatch(/^\d{4}-\d{2}-01$/);
    expect(params.to >= params.from).toBe(true);
  });

  it("takes explicit values from either a URLSearchParams or a page's searchParams", () => {
    expect(parseReportParams(new URLSearchParams("from=2026-10-01&to=2026-10-31&groupBy=week&by=model"))).toEqual({
      from: "2026-10-01",
      to: "2026-10-31",
      groupBy: "week",
      by: "model",
    });
    expect(parseReportParams({ from: ["2026-01-01"], to: "2026-01-02", by: "workspace" })).toMatchObject({
      from: "2026-01-01",
      by: "workspace",
    });
  });

  it("refuses bad values, reversed and overlong ranges with invalid_payload", () => {
    for (const bad of [
      "groupBy=year",
      "from=yesterday",
      "from=2026-10-02&to=2026-10-01",
      "from=2020-01-01&to=2026-01-01",
    ]) {
      expect(() => parseReportParams(new URLSearchParams(bad))).toThrow(AppError);
    }
  });
});

describe("reportToCsv", () => {
  it("quotes cells with commas or quotes and ends with the totals", () => {
    const figures = {
      usd: 1.5,
      inputTokens: 1,
      outputTokens: 2,
      cacheReadTokens: 3,
      cacheWriteTokens: 4,
      turns: 5,
      sessions: 6,
    };
    const report: Report = {
      from: "2026-10-01T00:00:00.000Z",
      to: "2026-11-01T00:00:00.000Z",
      groupBy: "month",
      by: "workspace",
      rows: [{ period: "2026-10", key: "w1", label: 'Acme, "Inc"', ...figures }],
      totals: figures,
      approvals: { allowed: 0, denied: 0, expired: 0, medianDecideMs: null },
    };
    expect(reportToCsv(report).split("\r\n")).toEqual([
      "period,workspace,usd,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,turns,sessions",
      '2026-10,"Acme, ""Inc""",1.5,1,2,3,4,5,6',
      "total,,1.5,1,2,3,4,5,6",
      "",
    ]);
  });

  it("escapes names a spreadsheet would run as formulas, and keeps numbers as numbers", () => {
    const figures = {
      usd: 0,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      turns: 0,
      sessions: 0,
    };
    const names = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "plain", "a-b"];
    const report: Report = {
      from: "2026-10-01T00:00:00.000Z",
      to: "2026-11-01T00:00:00.000Z",
      groupBy: "month",
      by: "user",
      rows: names.map((label, i) => ({ period: "2026-10", key: `u${i}`, label, ...figures })),
      totals: { ...figures, usd: -1 },
      approvals: { allowed: 0, denied: 0, expired: 0, medianDecideMs: null },
    };
    const lines = reportToCsv(report).split("\r\n");
    expect(lines.slice(1, 9).map((l) => l.slice("2026-10,".length, -",0,0,0,0,0,0,0".length))).toEqual([
      `"'=HYPERLINK(""http://evil.example"",""x"")"`,
      `"'+1+1"`,
      `"'-2+3"`,
      `"'@SUM(A1)"`,
      `"'\t=1"`,
      `"'\r=1"`,
      "plain",
      "a-b",
    ]);
    expect(lines[9]).toBe("total,,-1,0,0,0,0,0,0");
  });
});
