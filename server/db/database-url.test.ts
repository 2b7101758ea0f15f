import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_DATABASE_URL, parseDatabaseUrl, redactUrl } from "./database-url";

describe("parseDatabaseUrl", () => {
  const root = "/srv/conduit";

  it("resolves relative SQLite paths against the project root", () => {
    expect(parseDatabaseUrl(DEFAULT_DATABASE_URL, root)).toEqual({
      provider: "sqlite",
      file: path.join(root, "data/conduit.db"),
      url: `file:${path.join(root, "data/conduit.db")}`,
    });
    expect(parseDatabaseUrl("file:db.sqlite?connection_limit=1", root)).toMatchObject({
      file: path.join(root, "db.sqlite"),
    });
  });

  it("keeps absolute SQLite paths", () => {
    expect(parseDatabaseUrl("file:/var/lib/conduit.db", root)).toMatchObject({ file: "/var/lib/conduit.db" });
    expect(parseDatabaseUrl("file:///var/lib/conduit.db", root)).toMatchObject({ file: "/var/lib/conduit.db" });
  });

  it("recognises both PostgreSQL schemes", () => {
    for (const url of ["postgres://u:p@h/db", "postgresql://u:p@h:5432/db?sslmode=require"]) {
      expect(parseDatabaseUrl(url, root)).toEqual({ provider: "postgresql", url });
    }
  });

  it("rejects other schemes and in-memory SQLite, without echoing passwords", () => {
    expect(() => parseDatabaseUrl("mysql://u:secret@h/db", root)).toThrow(/mysql:\/\/u:\*\*\*@h\/db/);
    expect(() => parseDatabaseUrl("mysql://u:secret@h/db", root)).not.toThrow(/secret/);
    expect(() => parseDatabaseUrl("file::memory:", root)).toThrow(/in-memory/);
  });
});

describe("redactUrl", () => {
  it("hides the password only", () => {
    expect(redactUrl("postgresql://postgres:pw@127.0.0.1:5432/x")).toBe("postgresql://postgres:***@127.0.0.1:5432/x");
    expect(redactUrl("postgresql://postgres@127.0.0.1/x")).toBe("postgresql://postgres@127.0.0.1/x");
    expect(redactUrl("file:./data/conduit.db")).toBe("file:./data/conduit.db");
  });
});
