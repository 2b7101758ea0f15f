"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { useHydrated } from "@/components/use-hydrated";

/** The server's limit (app/api/workspaces/route.ts): said while typing, never cut silently. */
const maxNameChars = 80;

export function WorkspaceCreateForm() {
  const router = useRouter();
  const [error, setError] = useState<string>();
  const [nameLength, setNameLength] = useState(0);
  const tooLong = nameLength > maxNameChars;
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    setBusy(true);
    setError(undefined);
    try {
      const res = await fetch("/api/workspaces", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: String(form.get("name") ?? ""), directory: String(form.get("directory") ?? "") || undefined }),
      });
      const body = (await res.json().catch(() => null)) as { data?: { slug: string }; error?: { message: string } } | null;
      if (!res.ok || !body?.data) {
        setError(body?.error?.message ?? `Could not create the workspace (${res.status}).`);
        return;
      }
      formEl.reset();
      setNameLength(0);
      router.push(`/w/${body.data.slug}`);
      router.refresh();
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={onSubmit} className="card flex flex-wrap items-end gap-3" aria-label="Create a workspace">
      <label className="min-w-48 flex-1 space-y-1 text-sm">
        <span>Name</span>
        <input
          data-testid="workspace-create-name"
          name="name"
          required
          className="field"
          placeholder="my-project"
          aria-invalid={tooLong}
          aria-describedby="workspace-create-name-length"
          onChange={(e) => setNameLength(e.target.value.trim().length)}
        />
        <span
          id="workspace-create-name-length"
          data-testid="workspace-create-name-length"
          aria-live="polite"
          className={`block text-xs ${tooLong ? "text-red-600 dark:text-red-400" : "text-zinc-500"} ${nameLength > maxNameChars - 15 ? "" : "sr-only"}`}
        >
          {tooLong
            ? `${nameLength} characters: a name has at most ${maxNameChars}. Shorten it by ${nameLength - maxNameChars}.`
            : `${nameLength} of ${maxNameChars} characters`}
        </span>
      </label>
      <label className="min-w-48 flex-1 space-y-1 text-sm">
        <span>Directory (optional, inside the workspaces root)</span>
        <input data-testid="workspace-create-directory" name="directory" maxLength={200} className="field" placeholder="defaults to the name" />
      </label>
      <button data-testid="workspace-create-submit" type="submit" className="btn" disabled={busy || !hydrated || tooLong}>
        {busy ? "Creating…" : "Create workspace"}
      </button>
      {error && (
        <p data-testid="workspace-create-error" className="w-full text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
    </form>
  );
}
