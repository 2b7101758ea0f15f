"use client";

import Link from "next/link";
import { useId, useImperativeHandle, useMemo, useRef, useState, type ReactNode, type Ref } from "react";
import type { ApprovalStatus, ApprovalView, Decision } from "@/server/shared/wire/approval";
import { formatRelative, relativePath, sessionTitle } from "@/components/session/format";
import { LazyMarkdown } from "@/components/session/markdown-lazy";
import type { DecideOutcome } from "./approval-client";
import { ApprovalCountdown } from "./approval-countdown";
import { approvalShortcut } from "./approval-keys";
import { BashReview } from "./bash-review";
import { FileReviewPanel } from "./file-review";
import { approvedReviewText } from "./file-review-display";
import { QuestionForm } from "./question-form";
import { readQuestions } from "./question-answers";
import { approvalSummary } from "./use-approvals";

/** What the inbox's keyboard drives on the current card. */
export interface ApprovalCardHandle {
  allow(): void;
  deny(): void;
  focusMessage(): void;
  focus(): void;
}

export interface ApprovalCardProps {
  approval: ApprovalView;
  /** Sends the decision; `decideApproval(approval.id, decision)` from ./use-approvals does. */
  onDecide: (decision: Decision) => Promise<DecideOutcome>;
  /** The inbox's keyboard focus is on this card. */
  selected?: boolean;
  /** The workspace and session line; off inline in a session, where both are obvious. */
  showContext?: boolean;
  /** The approval keys act on this card: hints (a / d) next to the buttons, announced with aria-keyshortcuts. */
  shortcuts?: boolean;
  /** Clicking or focusing inside the card. */
  onActivate?: () => void;
  ref?: Ref<ApprovalCardHandle>;
}

// Own button styles: the global .btn classes are unlayered CSS, which utilities cannot override.
const buttonBase =
  "inline-flex items-center justify-center gap-1.5 rounded-md font-medium whitespace-nowrap focus-visible:outline-2 focus-visible:outline-offset-2 disabled:cursor-not-allowed disabled:opacity-50";
const buttons = {
  allow: `${buttonBase} bg-emerald-600 px-3 py-1 text-sm text-white hover:bg-emerald-500 focus-visible:outline-emerald-500`,
  deny: `${buttonBase} border border-red-300 px-3 py-1 text-sm text-red-700 hover:bg-red-50 focus-visible:outline-red-500 dark:border-red-900 dark:text-red-300 dark:hover:bg-red-950/50`,
  quiet: `${buttonBase} border border-zinc-300 px-3 py-1 text-sm text-zinc-700 hover:bg-zinc-100 focus-visible:outline-indigo-500 dark:border-zinc-700 dark:text-zinc-300 dark:hover:bg-zinc-800`,
  quietSmall: `${buttonBase} border border-zinc-300 px-2 py-0.5 text-xs text-zinc-700 hover:bg-zinc-100 focus-visible:outline-indigo-500 dark:border-zinc-700 dark:text-zinc-300 dark:hover:bg-zinc-800`,
};

const fileTools = new Set(["Edit", "Write", "NotebookEdit", "MultiEdit"]);

type Json = Record<string, unknown>;

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** What the approver changed before allowing, kept out of React state where typing would re-render the card. */
interface Draft {
  reviewedText?: string;
  command?: string;
  answers?: { answers: Record<string, string>; unanswered: string[] };
}

type Busy = "allow" | "remember" | "deny" | "stop" | undefined;

/**
 * One approval: what the CLI wants to do, shown so that it can be judged (a diff, the command,
 * the questions, the plan, or the input), and the ways to answer it. Decided approvals show who
 * answered, when, and with what. Reusable inline in a session with any `onDecide`.
 */
export function ApprovalCard({
  approval,
  onDecide,
  selected = false,
  showContext = true,
  shortcuts = false,
  onActivate,
  ref,
}: ApprovalCardProps) {
  const [busy, setBusy] = useState<Busy>();
  const [error, setError] = useState<string>();
  const [sent, setSent] = useState<ApprovalStatus>();
  const [message, setMessage] = useState("");
  const [detailsOpen, setDetailsOpen] = useState(false);
  const [rememberIndex, setRememberIndex] = useState(() => approval.rememberOptions[0]?.index ?? 0);
  const [rememberScope, setRememberScope] = useState<"session" | "workspace">("session");
  const draft = useRef<Draft>({ reviewedText: approval.review?.proposed });
  const root = useRef<HTMLElement>(null);
  const messageBox = useRef<HTMLTextAreaElement>(null);
  const messageId = useId();

  // The server's word wins; until its fact arrives, show what this card just sent.
  const status: ApprovalStatus = approval.status === "pending" && sent ? sent : approval.status;
  const pending = status === "pending";
  const tool = approval.toolName;
  const isPlan = tool === "ExitPlanMode";
  const isQuestion = tool === "AskUserQuestion";
  const questions = useMemo(() => (isQuestion ? readQuestions(approval.input) : []), [isQuestion, approval.input]);
  const rememberOption = approval.rememberOptions.find((o) => o.index === rememberIndex);

  const decide = async (kind: Exclude<Busy, undefined>, decision: Decision) => {
    if (busy || !pending) return;
    setBusy(kind);
    setError(undefined);
    try {
      const outcome = await onDecide(decision);
      if (outcome.ok) setSent(decision.behavior === "allow" ? "allowed" : "denied");
      else setError(outcome.message);
    } catch {
      setError("Could not send the decision. Try again.");
    } finally {
      setBusy(undefined);
    }
  };

  const allowDecision = (): Decision | string => {
    const d = draft.current;
    if (approval.review && fileTools.has(tool))
      return { behavior: "allow", reviewedText: d.reviewedText ?? approval.review.proposed };
    if (tool === "Bash" && d.command !== undefined) {
      if (d.command.trim() === "") return "The command is empty. Restore the proposal or write a command.";
      return { behavior: "allow", updatedInput: { ...approval.input, command: d.command } };
    }
    if (isQuestion && questions.length > 0) {
      const unanswered = d.answers?.unanswered ?? questions.map((q) => q.question);
      if (unanswered.length > 0) return `Answer every question first (${unanswered.length} left).`;
      return { behavior: "allow", updatedInput: { ...approval.input, answers: d.answers?.answers ?? {} } };
    }
    return { behavior: "allow" };
  };

  const allow = (remember: boolean) => {
    const decision = allowDecision();
    if (typeof decision === "string") {
      setError(decision);
      return;
    }
    if (remember && decision.behavior === "allow") {
      const scope = rememberOption?.workspaceScope ? rememberScope : "session";
      void decide("remember", { ...decision, remember: { index: rememberIndex, scope } });
    } else {
      void decide("allow", decision);
    }
  };

  const deny = (stop: boolean) => {
    const text = message.trim();
    void decide(stop ? "stop" : "deny", {
      behavior: "deny",
      ...(text ? { message: text } : {}),
      ...(stop ? { stop: true } : {}),
    });
  };

  useImperativeHandle(ref, () => ({
    allow: () => allow(false),
    deny: () => deny(false),
    focusMessage: () => messageBox.current?.focus(),
    focus: () => root.current?.focus({ preventScroll: false }),
  }));

  const tone = pending ? "border-amber-300 dark:border-amber-800/80" : "border-zinc-200 dark:border-zinc-800";
  const reason = shownReason(approval);
  return (
    <article
      ref={root}
      tabIndex={-1}
      data-testid="approval-card"
      data-approval-id={approval.id}
      data-tool={tool}
      data-status={status}
      data-selected={selected || undefined}
      aria-label={`${tool} approval${approval.subagent ? " from a subagent" : ""}, ${status}`}
      onFocusCapture={onActivate}
      onMouseDown={onActivate}
      className={`scroll-mt-20 rounded-lg border bg-white text-sm shadow-sm outline-none dark:bg-zinc-900 ${tone} ${
        selected ? "ring-2 ring-indigo-500 ring-offset-2 ring-offset-zinc-50 dark:ring-offset-zinc-950" : ""
      }`}
    >
      <header className="flex flex-wrap items-start gap-2 px-3 pt-2.5 pb-2">
        <ToolChip tool={tool} />
        <div className="min-w-[12rem] flex-1 basis-0">
          <div
            className="truncate font-mono text-xs font-medium text-zinc-800 dark:text-zinc-200"
            title={approvalSummary(approval)}
          >
            {approvalSummary(approval) || <span className="text-zinc-400">{tool}</span>}
          </div>
          {approval.subagent && (
            <div
              data-testid="approval-subagent"
              className="mt-0.5 flex min-w-0 items-center gap-1.5 text-xs text-violet-700 dark:text-violet-300"
            >
              <span className="shrink-0 rounded bg-violet-100 px-1.5 py-0.5 text-[10px] font-medium dark:bg-violet-950">
                Subagent
              </span>
              <span className="truncate" title={approval.subagent.description ?? undefined}>
                {approval.subagent.description
                  ? `asks for its task “${approval.subagent.description}”`
                  : "asks, not the session's main agent"}
              </span>
            </div>
          )}
          {showContext && (
            <div className="mt-0.5 flex flex-wrap items-center gap-x-1.5 text-xs text-zinc-500">
              <Link
                href={`/w/${approval.workspace.slug}`}
                className="hover:text-zinc-800 hover:underline dark:hover:text-zinc-200"
              >
                {approval.workspace.name}
              </Link>
              <span aria-hidden>·</span>
              <Link
                href={`/w/${approval.workspace.slug}/s/${approval.sessionId}`}
                data-testid="approval-session-link"
                className="max-w-[24ch] truncate hover:text-zinc-800 hover:underline dark:hover:text-zinc-200"
              >
                {sessionTitle({ id: approval.sessionId, title: approval.sessionTitle })}
              </Link>
              <span aria-hidden>·</span>
              <time dateTime={approval.createdAt} title={new Date(approval.createdAt).toLocaleString()}>
                asked {formatRelative(approval.createdAt)}
              </time>
            </div>
          )}
        </div>
        <div className="ml-auto flex shrink-0 items-center gap-1.5">
          {pending && <ApprovalCountdown expiresAt={approval.expiresAt} />}
          <StatusPill status={status} />
        </div>
      </header>

      {(reason || approval.blockedPath) && (
        <div className="mx-3 mb-2 rounded border-l-2 border-zinc-300 bg-zinc-50 px-2 py-1 text-xs text-zinc-700 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-300">
          {reason && (
            <p data-testid="approval-reason">
              <span className="font-medium text-zinc-500">Claude Code asks: </span>
              {reason}
            </p>
          )}
          {approval.blockedPath && <BlockedPath path={approval.blockedPath} root={approval.workspace.rootPath} />}
        </div>
      )}

      {pending ? (
        <div className="px-3 pb-2.5">
          <ApprovalBody approval={approval} draft={draft} questions={questions} readOnly={false} />
        </div>
      ) : (
        <DecidedSummary
          approval={approval}
          status={status}
          detailsOpen={detailsOpen}
          onToggleDetails={() => setDetailsOpen((o) => !o)}
        >
          {detailsOpen && <ApprovalBody approval={approval} draft={draft} questions={questions} readOnly />}
        </DecidedSummary>
      )}

      {error && (
        <p
          data-testid="approval-error"
          role="alert"
          className="mx-3 mb-2 rounded bg-red-50 px-2 py-1 text-xs text-red-800 dark:bg-red-950/60 dark:text-red-300"
        >
          {error}
        </p>
      )}

      {pending && (
        <footer className="space-y-2 rounded-b-lg border-t border-zinc-200 bg-zinc-50/70 px-3 py-2 dark:border-zinc-800 dark:bg-zinc-950/40">
          <div className="flex flex-wrap items-center gap-2">
            <button
              type="button"
              data-testid="approve-button"
              aria-keyshortcuts={shortcuts ? approvalShortcut.allow : undefined}
              className={buttons.allow}
              disabled={!!busy}
              onClick={() => allow(false)}
            >
              {busy === "allow" ? "Sending…" : isPlan ? "Approve plan" : isQuestion ? "Submit answers" : "Allow"}
              {shortcuts && <Kbd>a</Kbd>}
            </button>
            {approval.rememberOptions.length > 0 && (
              <div className="flex min-w-0 flex-wrap items-center gap-1.5 text-xs">
                <span className="text-zinc-500">or remember</span>
                {approval.rememberOptions.length === 1 ? (
                  <span
                    className="max-w-[48ch] truncate rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-[11px] dark:bg-zinc-800"
                    title={approval.rememberOptions[0]!.label}
                  >
                    {approval.rememberOptions[0]!.label}
                  </span>
                ) : (
                  <select
                    aria-label="Rule to remember"
                    data-testid="approve-remember-option"
                    value={rememberIndex}
                    onChange={(e) => setRememberIndex(Number(e.target.value))}
                    className="max-w-[48ch] rounded border border-zinc-300 bg-white px-1 py-0.5 font-mono text-[11px] dark:border-zinc-700 dark:bg-zinc-900"
                  >
                    {approval.rememberOptions.map((o) => (
                      <option key={o.index} value={o.index}>
                        {o.label}
                      </option>
                    ))}
                  </select>
                )}
                {rememberOption?.workspaceScope ? (
                  <select
                    aria-label="Remember for"
                    data-testid="approve-remember-scope"
                    value={rememberScope}
                    onChange={(e) => setRememberScope(e.target.value === "workspace" ? "workspace" : "session")}
                    className="rounded border border-zinc-300 bg-white px-1 py-0.5 text-[11px] dark:border-zinc-700 dark:bg-zinc-900"
                  >
                    <option value="session">in this session</option>
                    <option value="workspace">in this workspace</option>
                  </select>
                ) : (
                  <span className="text-zinc-500">in this session</span>
                )}
                <button
                  type="button"
                  data-testid="approve-remember-button"
                  className={buttons.quietSmall}
                  disabled={!!busy}
                  onClick={() => allow(true)}
                >
                  {busy === "remember" ? "Sending…" : "Allow and remember"}
                </button>
              </div>
            )}
          </div>
          <div className="flex flex-wrap items-start gap-2">
            <label htmlFor={messageId} className="sr-only">
              {isPlan ? "What should change in the plan" : "Message to Claude with the denial"}
            </label>
            <textarea
              id={messageId}
              ref={messageBox}
              data-testid="deny-message"
              aria-keyshortcuts={shortcuts ? approvalShortcut.message : undefined}
              rows={1}
              value={message}
              onChange={(e) => setMessage(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) {
                  e.preventDefault();
                  deny(false);
                }
              }}
              placeholder={
                isPlan
                  ? "What should change in the plan? (sent with Keep planning)"
                  : "Message to Claude (optional, sent with Deny)"
              }
              className="min-h-[30px] min-w-[12rem] flex-1 resize-y rounded-md border border-zinc-300 bg-white px-2 py-1 text-xs leading-[18px] outline-none placeholder:text-zinc-400 focus:border-indigo-500 focus:ring-2 focus:ring-indigo-500/30 dark:border-zinc-700 dark:bg-zinc-900"
            />
            <button
              type="button"
              data-testid="deny-button"
              aria-keyshortcuts={shortcuts ? approvalShortcut.deny : undefined}
              className={buttons.deny}
              disabled={!!busy}
              onClick={() => deny(false)}
            >
              {busy === "deny" ? "Sending…" : isPlan ? "Keep planning" : "Deny"}
              {shortcuts && <Kbd>d</Kbd>}
            </button>
            <button
              type="button"
              data-testid="deny-stop-button"
              title="Deny and interrupt the turn"
              className={buttons.quiet}
              disabled={!!busy}
              onClick={() => deny(true)}
            >
              {busy === "stop" ? "Stopping…" : "Deny and stop"}
            </button>
          </div>
        </footer>
      )}
    </article>
  );
}

function ApprovalBody({
  approval,
  draft,
  questions,
  readOnly,
}: {
  approval: ApprovalView;
  draft: { current: Draft };
  questions: ReturnType<typeof readQuestions>;
  readOnly: boolean;
}) {
  const tool = approval.toolName;
  const input = approval.input;
  if (approval.review && fileTools.has(tool)) {
    const approvedText = readOnly ? approvedReviewText(tool, approval.finalInput) : undefined;
    return (
      <div className="space-y-1">
        {readOnly && approvedText !== undefined && (
          <p className="text-xs text-zinc-500">The file on disk then, against the version that was approved:</p>
        )}
        <FileReviewPanel
          review={approval.review}
          root={approval.workspace.rootPath}
          readOnly={readOnly}
          shownText={approvedText}
          onTextChange={(text) => {
            draft.current = { ...draft.current, reviewedText: text };
          }}
        />
      </div>
    );
  }
  if (tool === "Bash" && typeof input.command === "string") {
    const shown = readOnly ? (str(approval.finalInput?.command) ?? input.command) : input.command;
    return (
      <BashReview
        command={shown}
        description={str(input.description)}
        readOnly={readOnly}
        onCommandChange={(edited) => {
          draft.current = { ...draft.current, command: edited };
        }}
      />
    );
  }
  if (tool === "AskUserQuestion") {
    const answered = readOnly ? answersOf(approval.finalInput) : undefined;
    return (
      <QuestionForm
        questions={questions}
        readOnly={readOnly}
        answered={answered}
        onAnswersChange={(answers) => {
          draft.current = { ...draft.current, answers };
        }}
      />
    );
  }
  if (tool === "ExitPlanMode") {
    const plan = approval.plan ?? str(input.plan) ?? null;
    return <PlanReview plan={plan} note={approval.planNote ?? null} />;
  }
  return (
    <div>
      <div className="mb-1 text-[11px] font-medium tracking-wide text-zinc-500 uppercase">Input</div>
      <pre
        data-testid="approval-input"
        className="max-h-80 overflow-auto rounded-md bg-zinc-50 px-2 py-1.5 font-mono text-xs dark:bg-zinc-950"
      >
        {JSON.stringify(input, null, 2)}
      </pre>
    </div>
  );
}

/**
 * ExitPlanMode's plan, to be read before it is approved: the text, where it came from when that
 * is worth saying, and a plain warning when Claude Code sent none (never another message instead).
 */
function PlanReview({ plan, note }: { plan: string | null; note: string | null }) {
  const missing = plan === null || plan.trim() === "";
  return (
    <div className="space-y-1.5">
      {note && (
        <p
          role="note"
          data-testid="approval-plan-note"
          data-missing={missing || undefined}
          className={
            missing
              ? "rounded border-l-2 border-amber-400 bg-amber-50 px-2 py-1 text-xs text-amber-900 dark:border-amber-700 dark:bg-amber-950/60 dark:text-amber-200"
              : "text-xs text-zinc-500 dark:text-zinc-400"
          }
        >
          {note}
        </p>
      )}
      {missing ? (
        !note && (
          <p
            role="note"
            data-testid="approval-plan-note"
            data-missing
            className="rounded border-l-2 border-amber-400 bg-amber-50 px-2 py-1 text-xs text-amber-900 dark:border-amber-700 dark:bg-amber-950/60 dark:text-amber-200"
          >
            Claude Code sent no plan text with this request.
          </p>
        )
      ) : (
        <div
          data-testid="approval-plan"
          tabIndex={0}
          aria-label="The plan"
          className="max-h-[32rem] overflow-auto rounded-md border border-zinc-200 bg-zinc-50/50 px-3 py-2 break-words focus-visible:outline-2 focus-visible:outline-indigo-500 dark:border-zinc-800 dark:bg-zinc-950/50"
        >
          <LazyMarkdown text={plan} />
        </div>
      )}
    </div>
  );
}

function answersOf(input: Json | null): Record<string, string> | undefined {
  const answers = input?.answers;
  if (answers === null || typeof answers !== "object") return undefined;
  return Object.fromEntries(
    Object.entries(answers as Json).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
}

const statusLook: Record<ApprovalStatus, { label: string; className: string }> = {
  pending: {
    label: "pending",
    className: "bg-amber-50 text-amber-900 ring-amber-200 dark:bg-amber-950 dark:text-amber-300 dark:ring-amber-900",
  },
  allowed: {
    label: "allowed",
    className:
      "bg-emerald-50 text-emerald-800 ring-emerald-200 dark:bg-emerald-950 dark:text-emerald-300 dark:ring-emerald-900",
  },
  denied: {
    label: "denied",
    className: "bg-red-50 text-red-800 ring-red-200 dark:bg-red-950 dark:text-red-300 dark:ring-red-900",
  },
  expired: {
    label: "expired",
    className:
      "bg-orange-50 text-orange-900 ring-orange-200 dark:bg-orange-950 dark:text-orange-300 dark:ring-orange-900",
  },
  cancelled: {
    label: "cancelled",
    className: "bg-zinc-100 text-zinc-700 ring-zinc-200 dark:bg-zinc-800 dark:text-zinc-300 dark:ring-zinc-700",
  },
};

function StatusPill({ status }: { status: ApprovalStatus }) {
  const look = statusLook[status] ?? statusLook.pending;
  return (
    <span
      className={`rounded-full px-2 py-0.5 text-[11px] font-medium whitespace-nowrap ring-1 ring-inset ${look.className}`}
    >
      {look.label}
    </span>
  );
}

const toolTone: Record<string, string> = {
  Edit: "bg-sky-100 text-sky-900 dark:bg-sky-950 dark:text-sky-300",
  Write: "bg-sky-100 text-sky-900 dark:bg-sky-950 dark:text-sky-300",
  NotebookEdit: "bg-sky-100 text-sky-900 dark:bg-sky-950 dark:text-sky-300",
  Bash: "bg-zinc-800 text-zinc-100 dark:bg-zinc-700",
  AskUserQuestion: "bg-violet-100 text-violet-900 dark:bg-violet-950 dark:text-violet-300",
  ExitPlanMode: "bg-indigo-100 text-indigo-900 dark:bg-indigo-950 dark:text-indigo-300",
};

const toolLabel: Record<string, string> = { AskUserQuestion: "Question", ExitPlanMode: "Plan" };

function ToolChip({ tool }: { tool: string }) {
  return (
    <span
      title={tool}
      className={`mt-px shrink-0 rounded px-1.5 py-0.5 font-mono text-[11px] font-semibold ${toolTone[tool] ?? "bg-zinc-100 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200"}`}
    >
      {toolLabel[tool] ?? tool}
    </span>
  );
}

function Kbd({ children }: { children: string }) {
  return (
    <kbd aria-hidden className="ml-0.5 rounded border border-current px-1 font-mono text-[10px] leading-4 opacity-60">
      {children}
    </kbd>
  );
}

function DecidedSummary({
  approval,
  status,
  detailsOpen,
  onToggleDetails,
  children,
}: {
  approval: ApprovalView;
  status: ApprovalStatus;
  detailsOpen: boolean;
  onToggleDetails: () => void;
  children: ReactNode;
}) {
  const who = approval.decidedBy?.name;
  const when = approval.decidedAt;
  const verb: Record<ApprovalStatus, string> = {
    pending: "Sent",
    allowed: who ? `Allowed by ${who}` : "Allowed",
    denied: who ? `Denied by ${who}` : "Denied",
    expired: "Expired unanswered",
    cancelled: "Cancelled",
  };
  const changed = approval.finalInput !== null && status === "allowed";
  const isFile = approval.review !== null && fileTools.has(approval.toolName);
  return (
    <div
      data-testid="approval-decision"
      className="space-y-1.5 border-t border-zinc-200 px-3 py-2 text-xs dark:border-zinc-800"
    >
      <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
        <span data-testid="approval-decided-by" className="font-medium text-zinc-800 dark:text-zinc-200">
          {verb[status]}
        </span>
        {when && (
          <time dateTime={when} title={new Date(when).toLocaleString()} className="text-zinc-500">
            {formatRelative(when)}
          </time>
        )}
        {changed && (
          <span
            data-testid="approval-changed"
            className="rounded bg-indigo-100 px-1.5 py-0.5 text-[10px] font-medium text-indigo-800 dark:bg-indigo-950 dark:text-indigo-300"
          >
            {isFile ? "approved version differed from the proposal" : "approved with changes"}
          </span>
        )}
        <button
          type="button"
          aria-expanded={detailsOpen}
          onClick={onToggleDetails}
          className="ml-auto text-indigo-600 hover:underline dark:text-indigo-400"
        >
          {detailsOpen ? "Hide details" : "Details"}
        </button>
      </div>
      {approval.message && (
        <blockquote className="border-l-2 border-zinc-300 pl-2 whitespace-pre-wrap text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">
          {approval.message}
        </blockquote>
      )}
      {children && <div className="pt-1">{children}</div>}
    </div>
  );
}

/**
 * The path the CLI's permission check stopped at (`blocked_path`: the file a command writes, a
 * path a tool reaches). Inside the workspace it is shown relative to it; outside, in full and
 * marked, since that is what an approver most needs to notice.
 */
function BlockedPath({ path, root }: { path: string; root: string }) {
  const inside = relativePath(path, root);
  if (inside !== path) {
    return (
      <p className="mt-0.5" data-testid="approval-path" data-outside="false">
        <span className="font-medium text-zinc-500">Path: </span>
        <span className="font-mono" title={path}>
          {inside}
        </span>
      </p>
    );
  }
  return (
    <p className="mt-0.5 text-amber-800 dark:text-amber-300" data-testid="approval-path" data-outside="true">
      <span className="font-medium">Outside the workspace: </span>
      <span className="font-mono">{path}</span>
    </p>
  );
}

/**
 * The CLI's reason for asking, unless it only repeats the file the card already names (for
 * Edit and Write the CLI's description is the file's name: "Claude Code asks: a.md" said nothing).
 */
function shownReason(approval: ApprovalView): string | null {
  const reason = approval.reason?.trim();
  if (!reason) return null;
  const file = approval.input.file_path ?? approval.input.notebook_path;
  if (typeof file === "string") {
    const root = approval.workspace.rootPath;
    const repeats = [file, relativePath(file, root), file.split("/").at(-1)];
    if (repeats.includes(reason)) return null;
  }
  return reason;
}
