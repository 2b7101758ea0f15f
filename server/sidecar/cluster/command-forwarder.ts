/**
 * Commands reach the sidecar that runs their session. `createSessionRouter` decides, per call,
 * where a session command runs: here when this node owns the session or nobody does (the local
 * hub then claims it), else at the owner, over the command bus. A local run that loses a claim
 * race (`SessionOwnedElsewhere`) is sent once to the winner. The node the browser talks to
 * authorizes a command before it routes it, and the owner does not trust it for that: the bus
 * takes only signed messages (`bus-signing.ts`) and checks the actor's role again before it runs
 * one (`forwarded-authorization.ts`, by method name). Idempotency is the owner's: a retried command carries the same `commandId`, which
 * the hub's command memo answers once.
 *
 * A forwarded command waits for the owner's answer only while the owner holds the session: when
 * its lease runs out unanswered (the owner died, or lost the session), the command is routed
 * again at once (to whoever runs the session now, or here, where the local hub claims the expired
 * lease), instead of waiting out the bus's timeout for a node that will never answer. The lease
 * stays the fence: nothing runs elsewhere before it expired. The request left in the dead owner's
 * list is dropped after its deadline, and should that node come back in time, the command's
 * `commandId` (unique per session in the log) keeps it from running twice.
 *
 * `ForwardingSessionCommands` is the `SessionCommands` of a clustered sidecar (the socket layer
 * cannot tell it from the hub); other socket modules route their owner-bound operations through
 * the same router (`router.route(name, run)`). Without Redis the router is `localSessionRouter`:
 * every call runs here, as before.
 *
 * Owns: the choice local/forwarded, method names on the bus, forwarding latency. Must not:
 * authorize (the socket layer does here, the bus's check at the owner), or hold state of a session.
 */
import type { WorkspaceAccess } from "@/server/db/sessions";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type {
  CommandAccepted,
  PermissionModeChoice,
  SessionView,
  SetModelResult,
  SetModeResult,
  WireEvent,
} from "@/server/shared/wire/session";
import type { PromptImage } from "@/server/shared/wire/session-controls";
import { rememberBounded } from "@/server/sidecar/session/command-memo";
import type { SessionCommands, SessionFeed } from "@/server/sidecar/session/session-commands";
import type { Actor, NewSessionInput } from "@/server/sidecar/session/session-hub-types";
import type { ClusterDirectory } from "./cluster-directory";
import type { CommandBus } from "./command-bus";
import { SessionOwnedElsewhere } from "./session-owned-elsewhere";

/** An operation on a session that must run where the session's CLI runs. */
export type RoutedOperation<A, R> = (sessionId: string, args: A) => Promise<R>;

export interface SessionRouter {
  /**
   * Registers `run` under `name` (served to the other nodes) and returns the routed operation:
   * `run(args)` here or at the session's owner. `args` and the result must be plain JSON.
   */
  route<A, R>(name: string, run: (args: A) => Promise<R>): RoutedOperation<A, R>;
}

/** One sidecar alone: every operation runs here. */
export const localSessionRouter: SessionRouter = {
  route: (_name, run) => (_sessionId, args) => run(args),
};

export interface SessionRouterDeps {
  directory: ClusterDirectory;
  bus: CommandBus;
  /** Seconds each forwarded command took, answer included (`conduit_command_forward_seconds`). */
  observeForward?: (seconds: number, method: string) => void;
  /**
   * Whether this node holds the session's lease now (the lease keeper's own record: claimed or
   * renewed by this node, not run out). Such a command runs here without reading the lease row:
   * no other node may claim an unexpired lease, so the row can only name this node.
   */
  holds?: (sessionId: string) => boolean;
}

/** The router of a clustered sidecar. */
export function createSessionRouter(deps: SessionRouterDeps): SessionRouter & {
  /** Sends `name` to `nodeId` (timed); the owner's answer or its error. */
  forward<R>(nodeId: string, name: string, args: unknown, timeoutMs?: number): Promise<R>;
} {
  const selfId = deps.directory.selfId;
  const forward = async <R>(nodeId: string, name: string, args: unknown, timeoutMs?: number): Promise<R> => {
    const started = performance.now();
    try {
      return (await deps.bus.request(nodeId, name, args, timeoutMs)) as R;
    } finally {
      deps.observeForward?.((performance.now() - started) / 1000, name);
    }
  };
  /** The session's unexpired owner (null: none) and, when the directory tells, when its lease runs out. */
  const ownerAndExpiry = async (sessionId: string): Promise<{ owner: string | null; expiresAt: number | undefined }> => {
    if (deps.directory.leaseOf === undefined) return { owner: await deps.directory.ownerOf(sessionId), expiresAt: undefined };
    const lease = await deps.directory.leaseOf(sessionId);
    return lease !== null && lease.expiresAt > Date.now() ? { owner: lease.ownerId, expiresAt: lease.expiresAt } : { owner: null, expiresAt: undefined };
  };
  return {
    forward,
    route<A, R>(name: string, run: (args: A) => Promise<R>): RoutedOperation<A, R> {
      deps.bus.handle(`session.${name}`, async (args) => {
        try {
          return await run(args as A);
        } catch (err) {
          // Forwarded once already: the sender retries later rather than chase the session around.
          if (err instanceof SessionOwnedElsewhere) throw movedError();
          throw err;
        }
      });
      const routed = async (sessionId: string, args: A, rerouted: boolean): Promise<R> => {
        const { owner, expiresAt } = deps.holds?.(sessionId) ? { owner: selfId, expiresAt: undefined } : await ownerAndExpiry(sessionId);
        if (owner !== null && owner !== selfId) return forwardWhileOwned(owner, expiresAt, sessionId, args, rerouted);
        try {
          return await run(args);
        } catch (err) {
          if (!(err instanceof SessionOwnedElsewhere) || err.ownerId === selfId) throw err;
          return forwardWhileOwned(err.ownerId, undefined, sessionId, args, rerouted);
        }
      };
      const forwardWhileOwned = async (owner: string, expiresAt: number | undefined, sessionId: string, args: A, rerouted: boolean): Promise<R> => {
        const answer = forward<R>(owner, `session.${name}`, args);
        if (rerouted || deps.directory.leaseOf === undefined) return answer;
        const watch = watchLease(deps.directory.leaseOf.bind(deps.directory), sessionId, owner, expiresAt);
        try {
          const first = await Promise.race([answer.then((value) => ({ value })), watch.lost]);
          if (first !== "lost") return first.value;
        } finally {
          watch.stop();
        }
        // The owner's lease ran out unanswered: the command goes where the session runs now.
        answer.catch(() => undefined);
        return routed(sessionId, args, true);
      };
      return (sessionId, args) => routed(sessionId, args, false);
    },
  };
}

/** How often a lease that has not run out is looked at again (at the latest). */
const leaseWatchMaxMs = 2_000;

/**
 * Resolves `lost` ("lost") once the session's lease is no longer `owner`'s unexpired one; looks at
 * the lease when it would run out (`expiresAt`, when known: no read before) and every
 * {@link leaseWatchMaxMs} at most, until `stop()`.
 */
function watchLease(
  leaseOf: NonNullable<ClusterDirectory["leaseOf"]>,
  sessionId: string,
  owner: string,
  expiresAt: number | undefined,
): { lost: Promise<"lost">; stop: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const lost = new Promise<"lost">((resolve) => {
    const look = async () => {
      if (stopped) return;
      const lease = await leaseOf(sessionId).catch(() => undefined);
      if (stopped) return;
      const now = Date.now();
      if (lease !== undefined && (lease === null || lease.ownerId !== owner || lease.expiresAt <= now)) return resolve("lost");
      // a failed read is looked at again later; an unexpired lease when it would run out
      const wait = lease === undefined ? 500 : Math.min(leaseWatchMaxMs, lease.expiresAt - now + 25);
      timer = setTimeout(() => void look(), wait);
    };
    if (expiresAt === undefined) void look();
    else timer = setTimeout(() => void look(), Math.min(leaseWatchMaxMs, Math.max(0, expiresAt - Date.now() + 25)));
  });
  return {
    lost,
    stop: () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

function movedError(): AppError {
  return new AppError(ErrorCode.unavailable, "This session moved to another server a moment ago; try again.");
}

/** What `ForwardingSessionCommands` runs locally: the hub's commands plus its view of one session. */
export type LocalSessionCommands = SessionCommands & { view(sessionId: string): Promise<SessionView> };

/** Creates a session remembered per person and commandId, so a retry reaches the same node. */
const maxRememberedCreates = 2_000;

/**
 * `SessionCommands` for a clustered sidecar: each command runs at the session's owner (see the
 * module comment); a new session starts on the node the directory picks (most free memory);
 * the live views of a workspace are this node's and every other live node's.
 */
export class ForwardingSessionCommands implements SessionCommands {
  private readonly routed: {
    prompt: RoutedOperation<{ actor: Actor; sessionId: string; text: string; commandId: string; images?: PromptImage[] }, CommandAccepted>;
    interrupt: RoutedOperation<{ actor: Actor; sessionId: string; commandId: string }, CommandAccepted>;
    stop: RoutedOperation<{ actor: Actor; sessionId: string; commandId: string }, CommandAccepted>;
    setMode: RoutedOperation<
      { actor: Actor; sessionId: string; mode: PermissionModeChoice; commandId: string; allowBypass: boolean },
      SetModeResult
    >;
    setModel: RoutedOperation<{ actor: Actor; sessionId: string; model: string; commandId: string }, SetModelResult>;
    view: RoutedOperation<{ sessionId: string }, SessionView>;
  };
  private readonly createTargets = new Map<string, string>();

  constructor(
    private readonly local: LocalSessionCommands,
    private readonly cluster: {
      directory: ClusterDirectory;
      bus: CommandBus;
      router: ReturnType<typeof createSessionRouter>;
      /** Wait for another node's live views (a slow node is left out of the list, not waited for). */
      viewsTimeoutMs?: number;
    },
  ) {
    const { router, bus } = cluster;
    this.routed = {
      prompt: router.route("prompt", (a) => local.prompt(a.actor, a.sessionId, a.text, a.commandId, a.images)),
      interrupt: router.route("interrupt", (a) => local.interrupt(a.actor, a.sessionId, a.commandId)),
      stop: router.route("stop", (a) => local.stop(a.actor, a.sessionId, a.commandId)),
      setMode: router.route("setMode", (a) => local.setMode(a.actor, a.sessionId, a.mode, a.commandId, a.allowBypass)),
      setModel: router.route("setModel", (a) => local.setModel(a.actor, a.sessionId, a.model, a.commandId)),
      view: router.route("view", (a) => local.view(a.sessionId)),
    };
    bus.handle("session.create", async (args) => {
      const a = args as { actor: Actor; access: WorkspaceAccess; input: NewSessionInput };
      return local.createSession(a.actor, a.access, a.input);
    });
    bus.handle("session.liveViews", async (args) => local.liveViews((args as { workspaceId: string }).workspaceId));
  }

  async createSession(actor: Actor, access: WorkspaceAccess, input: NewSessionInput): Promise<SessionView> {
    const key = `${actor.id}\u0000${input.commandId}`;
    const target = this.createTargets.get(key) ?? (await this.cluster.directory.pickNodeForNewSession());
    rememberBounded(this.createTargets, key, target, maxRememberedCreates);
    if (target === this.cluster.directory.selfId) return this.local.createSession(actor, access, input);
    return this.cluster.router.forward<SessionView>(target, "session.create", { actor, access, input });
  }

  prompt(actor: Actor, sessionId: string, text: string, commandId: string, images?: readonly PromptImage[]): Promise<CommandAccepted> {
    return this.routed.prompt(sessionId, {
      actor: plainActor(actor),
      sessionId,
      text,
      commandId,
      ...(images && images.length > 0 ? { images: [...images] } : {}),
    });
  }

  interrupt(actor: Actor, sessionId: string, commandId: string): Promise<CommandAccepted> {
    return this.routed.interrupt(sessionId, { actor: plainActor(actor), sessionId, commandId });
  }

  stop(actor: Actor, sessionId: string, commandId: string): Promise<CommandAccepted> {
    return this.routed.stop(sessionId, { actor: plainActor(actor), sessionId, commandId });
  }

  setMode(actor: Actor, sessionId: string, mode: PermissionModeChoice, commandId: string, allowBypass: boolean): Promise<SetModeResult> {
    return this.routed.setMode(sessionId, { actor: plainActor(actor), sessionId, mode, commandId, allowBypass });
  }

  setModel(actor: Actor, sessionId: string, model: string, commandId: string): Promise<SetModelResult> {
    return this.routed.setModel(sessionId, { actor: plainActor(actor), sessionId, model, commandId });
  }

  /** A read of the shared log: served here, wherever the session runs. */
  fetchEvent(sessionId: string, seq: number): Promise<WireEvent> {
    return this.local.fetchEvent(sessionId, seq);
  }

  /** The session's view as its owner holds it (here when nobody runs it). */
  view(sessionId: string): Promise<SessionView> {
    return this.routed.view(sessionId, { sessionId });
  }

  async liveViews(workspaceId: string): Promise<SessionView[]> {
    const selfId = this.cluster.directory.selfId;
    const others = (await this.cluster.directory.liveNodes()).filter((n) => n.id !== selfId);
    const [own, ...remote] = await Promise.all([
      this.local.liveViews(workspaceId),
      ...others.map((node) =>
        this.cluster.router
          .forward<SessionView[]>(node.id, "session.liveViews", { workspaceId }, this.cluster.viewsTimeoutMs ?? 2_000)
          .catch(() => [] as SessionView[]),
      ),
    ]);
    const byId = new Map<string, SessionView>();
    // The owners' views first: this node may hold an older entry of a session it only showed.
    for (const view of [...remote.flat(), ...own]) if (!byId.has(view.id)) byId.set(view.id, view);
    return [...byId.values()];
  }
}

/** The actor as plain JSON (a socket's user may carry more fields). */
function plainActor(actor: Actor): Actor {
  return { id: actor.id, name: actor.name };
}

/** The socket layer's `hub`: the local feed (events, statuses, catch-up) with the forwarding commands. */
export function feedWithCommands<F extends SessionFeed>(feed: F, commands: SessionCommands): SessionCommands & SessionFeed {
  return {
    createSession: (...a) => commands.createSession(...a),
    prompt: (...a) => commands.prompt(...a),
    interrupt: (...a) => commands.interrupt(...a),
    stop: (...a) => commands.stop(...a),
    setMode: (...a) => commands.setMode(...a),
    setModel: (...a) => commands.setModel(...a),
    fetchEvent: (...a) => commands.fetchEvent(...a),
    liveViews: (...a) => commands.liveViews(...a),
    subscribe: (...a) => feed.subscribe(...a),
    onDidEmitEvent: (listener) => feed.onDidEmitEvent(listener),
    onDidChangeStatus: (listener) => feed.onDidChangeStatus(listener),
  };
}
