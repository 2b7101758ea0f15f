"use client";

import dynamic from "next/dynamic";
import { languageForPath } from "@/components/approval/apply-hunks";
import { DiffSkeleton } from "@/components/approval/diff-skeleton";
import type { GitFileDiff, GitFileSide } from "./git-api";

const ReviewDiff = dynamic(() => import("@/components/approval/review-diff"), {
  ssr: false,
  loading: () => <DiffSkeleton height={240} />,
});

function describe(side: GitFileSide): string | undefined {
  if (side.kind === "binary") return `binary, ${side.size} bytes`;
  if (side.kind === "too_large") return `too large to show (${side.size} bytes)`;
  return undefined;
}

/** One file's before → after as a read-only Monaco diff; binary and large sides are named, not drawn. */
export function GitFileDiffView({ diff, testId = "git-diff" }: { diff: GitFileDiff; testId?: string }) {
  const notText = describe(diff.before) ?? describe(diff.after);
  return (
    <div data-testid={testId} data-path={diff.path} className="space-y-1">
      <p className="font-mono text-xs text-zinc-500">
        {diff.path}
        {diff.before.kind === "absent" && " (new)"}
        {diff.after.kind === "absent" && " (deleted)"}
      </p>
      {notText ? (
        <p className="text-xs text-zinc-500">Not shown: {notText}.</p>
      ) : (
        <ReviewDiff
          key={diff.path}
          original={diff.before.kind === "text" ? diff.before.content : ""}
          modified={diff.after.kind === "text" ? diff.after.content : ""}
          language={languageForPath(diff.path)}
          readOnly
          height={240}
          maxHeight={600}
          collapseUnchanged
        />
      )}
    </div>
  );
}
