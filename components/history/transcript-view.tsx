"use client";

import type { TranscriptApproval, TranscriptTurnCost } from "@/server/shared/wire/history";
import Link from "next/link";
import { useMemo } from "react";
import type { WireEvent } from "@/server/shared/wire/session";
import { formatUsd } from "@/components/format/money";
import { buildConversation, type ConversationItem } from "@/components/session/conversation";
import { SubagentContext } from "@/components/session/tools/subagent";
import { nestSubagents } from "@/components/session/tools/tool-data";
import { formatDuration } from "@/components/session/format";
import { ConversationItemView } from "@/components/session/conversation-pane";
import { ChangesPanel } from "@/components/changes/changes-panel";

const noop = () => undefined;

export interface TranscriptViewProps {
  events: WireEvent[];
  rootPath: string;
  liveHref: string;
  live: boolean;
  /** Whether a resume can work; absent means it can. */
  resume?: { resumable: boolean; reason?: string };
  turnCosts: TranscriptTurnCost[];
  approvals: TranscriptApproval[];
  /** The session whose file changes are listed (read-only: take-backs are on the live page). */
  changes?: { slug: string; sessionId: string };
  /** Where the session's prompt images are served. */
  imageBase?: string;
}

/** A past session read from its event log: the conversation, cost per turn, approvals and who decided them. */
export function TranscriptView({
  events,
  rootPath,
  liveHref,
  live,
  resume,
  turnCosts,
  approvals,
  changes,
  imageBase,
}: TranscriptViewProps) {
  const resumable = live || resume?.resumable !== false;
  const conversation = useMemo(() => buildConversation(events), [events]);
  // a subagent's messages under the Agent call that started it, as on the live page
  const nested = useMemo(() => nestSubagents(conversation.items), [conversation.items]);
  const subagents = useMemo(
    () => ({
      children: nested.children,
      render: (item: ConversationItem) => <ConversationItemView item={item} rootPath={rootPath} onLoadFull={noop} />,
    }),
    [nested, rootPath],
  );
  const total = turnCosts.reduce((s, t) => s + t.usd, 0);
  return (
    <div className="space-y-6">
      <div className="card flex flex-wrap items-center gap-3 text-sm">
        <Link href={liveHref} data-testid="resume-button" data-resumable={resumable} className="btn py-1.5">
          {live ? "Open the live session" : resumable ? "Resume this session" : "Open the session"}
        </Link>
        <span className="text-zinc-500">
          {live
            ? "This session is live; its page shows it as it happens."
            : resumable
              ? "Opens the session page with the prompt box ready: your next prompt starts a new CLI process that resumes this conversation (--resume), in the same workspace directory."
              : resume?.reason}
        </span>
      </div>

      <section data-testid="transcript-view" aria-label="Transcript" className="space-y-3">
        {conversation.items.length === 0 ? (
          <p className="text-sm text-zinc-500">This session has no messages.</p>
        ) : (
          <SubagentContext.Provider value={subagents}>
            {nested.top.map((item) => (
              <ConversationItemView key={item.key} item={item} rootPath={rootPath} onLoadFull={noop} imageBase={imageBase} />
            ))}
          </SubagentContext.Provider>
        )}
      </section>

      {changes && (
        <section className="card" aria-label="Files changed">
          <h2 className="mb-2 text-sm font-medium text-zinc-500">Files changed</h2>
          <ChangesPanel slug={changes.slug} sessionId={changes.sessionId} socket={undefined} refreshKey="history" readOnly newCommandId={() => ""} />
        </section>
      )}

      <section className="card overflow-x-auto" aria-label="Cost per turn">
        <h2 className="mb-2 text-sm font-medium text-zinc-500">Cost per turn</h2>
        <table data-testid="transcript-costs" className="w-full text-sm">
          <thead className="text-left text-xs text-zinc-500">
            <tr>
              <th className="py-1">#</th>
              <th>When</th>
              <th>By</th>
              <th>Model</th>
              <th className="text-right">Tokens in / out</th>
              <th className="text-right">Duration</th>
              <th className="text-right">USD</th>
            </tr>
          </thead>
          <tbody>
            {turnCosts.map((t, i) => (
              <tr
                key={t.resultId}
                data-testid="transcript-turn-cost"
                className="border-t border-zinc-100 dark:border-zinc-800"
              >
                <td className="py-1">{i + 1}</td>
                <td className="font-mono text-xs">{t.at.replace("T", " ").slice(0, 19)}</td>
                <td>{t.userName}</td>
                <td className="font-mono text-xs">{t.model}</td>
                <td className="text-right font-mono">
                  {t.inputTokens} / {t.outputTokens}
                </td>
                <td className="text-right">{formatDuration(t.durationMs)}</td>
                <td className="text-right font-mono">{formatUsd(t.usd)}</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr className="border-t-2 border-zinc-300 font-medium dark:border-zinc-700">
              <td className="py-1" colSpan={6}>
                Total
              </td>
              <td className="text-right font-mono" data-testid="transcript-total">
                {formatUsd(total)}
              </td>
            </tr>
          </tfoot>
        </table>
      </section>

      <section className="card" aria-label="Approvals">
        <h2 className="mb-2 text-sm font-medium text-zinc-500">Approvals</h2>
        {approvals.length === 0 ? (
          <p className="text-sm text-zinc-500">No tool needed an approval in this session.</p>
        ) : (
          <ul className="space-y-1 text-sm">
            {approvals.map((a) => (
              <li key={a.id} data-testid="transcript-approval">
                <span className="font-mono">{a.toolName}</span> · {a.status}
                {a.decidedBy && <> by {a.decidedBy}</>}
                {a.decidedAt && <span className="text-zinc-500"> at {a.decidedAt.replace("T", " ").slice(0, 19)}</span>}
                {a.message && <span className="text-zinc-500"> — {a.message}</span>}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
