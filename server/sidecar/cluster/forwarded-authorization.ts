/**
 * The owner's own role check of a forwarded command. The node a browser talks to authorizes a
 * command before it forwards it; the owner does not take its word for it: before it runs a
 * forwarded command that acts for a person, it asks the database the same question the socket
 * layer asks for a local command (`authorizeSession`: a member of the session's workspace, with
 * the role the command needs), for the actor the message names, and refuses (logged) what that
 * person may not do. Whatever the command's outcome depends on is taken from the owner's own
 * reading too: `session.setMode`'s `allowBypass` is the workspace's setting read here, and
 * `session.create` gets the workspace access read here.
 *
 * The command bus runs every handler behind this check (`createCommandBus`'s `checkFor`), and a
 * method without a rule here cannot be served (`checkFor` throws at start), so a new forwarded
 * command cannot skip the check by omission.
 * Reads that carry no actor (a session's view, a control's list, the MCP status, the live views
 * of a workspace) are `node` rules: answered to any sidecar whose signature checks out
 * (`bus-signing.ts`), as the forwarding node authorized its reader.
 *
 * Owns: the table of methods and their checks. Must not: run commands, or trust a field of a
 * forwarded message that the database can answer.
 */
import type { Logger } from "pino";
import { z } from "zod";
import type { Db } from "@/server/db/client";
import { findWorkspaceAccess, type SessionAccess } from "@/server/db/sessions";
import { canPerform, parseRole, type WorkspaceAction } from "@/server/domain/workspace/roles";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { authorizeSession } from "@/server/sidecar/socket/session-access";

/** Checks a forwarded message's arguments at the owner; answers the arguments to run with, or throws an AppError. */
export type ForwardedCheck = (args: unknown, from: string) => Promise<unknown>;

const ZActor = z.object({ id: z.string().min(1), name: z.string() });
const ZActorSession = z.looseObject({ actor: ZActor, sessionId: z.string().min(1) });
const ZActorChange = z.looseObject({ actor: ZActor, p: z.looseObject({ sessionId: z.string().min(1) }) });
const ZCreate = z.looseObject({ actor: ZActor, access: z.looseObject({ workspace: z.looseObject({ slug: z.string().min(1) }) }) });

type Need = WorkspaceAction | "owner";

type Rule =
  /** Any signed sidecar may ask (no actor in the message). */
  | { kind: "node" }
  /** The actor must be allowed `need` in the session; `rewrite` replaces fields with the owner's reading. */
  | { kind: "session"; need: Need; refused: string; schema: z.ZodType<{ actor: { id: string } }>; sessionOf: (args: never) => string; rewrite?: (args: never, access: SessionAccess) => unknown }
  /** The actor must be allowed to start sessions in the workspace the message names. */
  | { kind: "create" }
  /** Checked by the approval service itself, against the decider's role now (as a local click). */
  | { kind: "approval" };

const steer = (refused: string, extra: Partial<Extract<Rule, { kind: "session" }>> = {}): Rule => ({
  kind: "session",
  need: "steer",
  refused,
  schema: ZActorSession,
  sessionOf: (a: z.infer<typeof ZActorSession>) => a.sessionId,
  ...extra,
});
const viewers = (what: string) => `Viewers cannot ${what}. Ask a workspace owner for the editor role.`;
const change = steer("Viewers can read a session's changes but not take them back. Ask a workspace owner for the editor role.", {
  schema: ZActorChange,
  sessionOf: (a: z.infer<typeof ZActorChange>) => a.p.sessionId,
});

/**
 * Every method served on the command bus, with what the owner checks before it runs it (the
 * router serves an operation `name` as `session.<name>`).
 */
export const forwardedRules: Readonly<Record<string, Rule>> = {
  "session.prompt": steer(viewers("steer sessions")),
  "session.interrupt": steer(viewers("steer sessions")),
  "session.stop": steer(viewers("steer sessions")),
  "session.setMode": steer(viewers("steer sessions"), {
    // Bypass is allowed when the workspace allows it now, as the owner reads it.
    rewrite: (a: Record<string, unknown>, access) => ({ ...a, allowBypass: access.workspace.allowBypass }),
  }),
  "session.setModel": steer(viewers("steer sessions")),
  "session.view": { kind: "node" },
  "session.create": { kind: "create" },
  "session.liveViews": { kind: "node" },
  "session.controls.listModels": { kind: "node" },
  "session.controls.contextUsage": { kind: "node" },
  "session.controls.fileSuggestions": { kind: "node" },
  "session.controls.slashCommands": { kind: "node" },
  "session.controls.setThinking": steer(viewers("steer sessions")),
  "session.controls.cancelQueued": steer(viewers("steer sessions")),
  "session.mcp.status": { kind: "node" },
  "session.manage.rename": steer(viewers("rename sessions")),
  "session.manage.stopTask": steer(viewers("stop a session's tasks")),
  "session.manage.archive": steer(viewers("archive sessions")),
  "session.manage.remove": { ...(steer("Only the workspace's owners can delete sessions.") as Extract<Rule, { kind: "session" }>), need: "owner" },
  "session.changes.revertFile": change,
  "session.changes.revertHunk": change,
  "session.changes.rewind": change,
  "approval.decide": { kind: "approval" },
  // Only ever lowers what a person may do (their pending questions are withdrawn).
  "approval.withdraw": { kind: "node" },
};

export interface ForwardedAuthorizer {
  /** The check of `method`; throws when the table has no rule for it. */
  checkFor(method: string): ForwardedCheck;
}

export function createForwardedAuthorizer(deps: { db: Db; log: Logger }): ForwardedAuthorizer {
  const { db, log } = deps;
  const refuse = (method: string, from: string, actorId: string | undefined, err: unknown): never => {
    log.warn(
      { method, from, actor: actorId, code: err instanceof AppError ? err.code : undefined, reason: err instanceof Error ? err.message : String(err) },
      "a forwarded command was refused by the owner's role check",
    );
    throw err;
  };
  const parse = <T>(schema: z.ZodType<T>, method: string, args: unknown, from: string): T => {
    const parsed = schema.safeParse(args);
    if (parsed.success) return parsed.data;
    return refuse(method, from, undefined, new AppError(ErrorCode.invalidPayload, `A forwarded "${method}" names no actor or session.`));
  };
  return {
    checkFor(method) {
      const rule = forwardedRules[method];
      if (rule === undefined) {
        throw new Error(`command bus: "${method}" has no authorization rule; add one to server/sidecar/cluster/forwarded-authorization.ts`);
      }
      switch (rule.kind) {
        case "node":
        case "approval":
          return async (args) => args;
        case "session":
          return async (args, from) => {
            const a = parse(rule.schema, method, args, from);
            const sessionId = (rule.sessionOf as (a: unknown) => string)(a);
            let access: SessionAccess;
            try {
              access = await authorizeSession(db, a.actor.id, sessionId, rule.need === "owner" ? "read" : rule.need, rule.refused);
              if (rule.need === "owner" && access.role !== "owner") throw new AppError(ErrorCode.forbidden, rule.refused);
            } catch (err) {
              return refuse(method, from, a.actor.id, err);
            }
            return rule.rewrite ? (rule.rewrite as (a: unknown, access: SessionAccess) => unknown)(a, access) : a;
          };
        case "create":
          return async (args, from) => {
            const a = parse(ZCreate, method, args, from);
            const access = await findWorkspaceAccess(db, a.actor.id, a.access.workspace.slug);
            const role = access === undefined ? undefined : parseRole(access.role);
            if (!access || !role) return refuse(method, from, a.actor.id, new AppError(ErrorCode.notFound, "No such workspace, or you are not a member of it."));
            if (!canPerform(role, "steer")) {
              return refuse(method, from, a.actor.id, new AppError(ErrorCode.forbidden, "Viewers cannot start sessions. Ask a workspace owner for the editor role."));
            }
            return { ...a, access };
          };
      }
    },
  };
}
