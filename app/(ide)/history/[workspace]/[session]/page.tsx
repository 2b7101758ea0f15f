import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { TranscriptView } from "@/components/history/transcript-view";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { requirePageUser } from "@/server/web/auth";
import { readTranscript } from "@/server/web/history";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Transcript" };

export default async function TranscriptPage({ params }: { params: Promise<{ workspace: string; session: string }> }) {
  const user = await requirePageUser();
  const { workspace: slug, session: sessionId } = await params;
  const t = await readTranscript(user.id, slug, sessionId).catch((err: unknown) => {
    if (err instanceof AppError && err.code === ErrorCode.notFound) notFound();
    throw err;
  });
  const title = t.session.title ?? `Session ${t.session.id.slice(0, 8)}`;
  return (
    <div className="space-y-4">
      <div>
        <p className="text-sm [overflow-wrap:anywhere] text-zinc-500">
          <Link href={`/history?workspace=${encodeURIComponent(t.workspace.slug)}`} className="hover:underline">
            {t.workspace.name} history
          </Link>
        </p>
        <h1 className="text-xl font-semibold [overflow-wrap:anywhere]">{title}</h1>
        <p className="text-sm text-zinc-500">
          {t.session.status} · started by {t.session.createdBy.name} on {t.session.createdAt.slice(0, 10)}
          {t.session.model && <> · {t.session.model}</>}
        </p>
      </div>
      <TranscriptView
        events={t.events}
        rootPath={t.workspace.rootPath}
        liveHref={`/w/${encodeURIComponent(t.workspace.slug)}/s/${encodeURIComponent(t.session.id)}`}
        imageBase={`/api/workspaces/${encodeURIComponent(t.workspace.slug)}/sessions/${encodeURIComponent(t.session.id)}/images`}
        live={t.live}
        resume={t.resume}
        turnCosts={t.turnCosts}
        approvals={t.approvals}
        changes={{ slug: t.workspace.slug, sessionId: t.session.id }}
      />
    </div>
  );
}
