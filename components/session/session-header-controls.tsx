"use client";

/**
 * The session header's own controls: the tabs' buttons, who else is here, the permission mode,
 * Stop (the running turn; the same action as the composer's Stop and Esc, one word for it).
 */
import { memo, useState, type ReactNode } from "react";
import type { PermissionModeChoice, Viewer } from "@/server/shared/wire/session";
import { avatarColour, initials } from "./avatar";
import { modeChoices, modeLabel } from "./modes";

export function TabButton({
  id,
  testId,
  active,
  onSelect,
  children,
}: {
  id: string;
  testId?: string;
  active: boolean;
  onSelect: () => void;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      role="tab"
      id={`tab-${id}`}
      data-testid={testId}
      aria-selected={active}
      aria-controls={`panel-${id}`}
      tabIndex={active ? 0 : -1}
      onClick={onSelect}
      className={`-mb-px border-b-2 px-3 py-1.5 font-medium focus-visible:outline-2 focus-visible:outline-indigo-500 ${
        active
          ? "border-indigo-500 text-zinc-900 dark:text-zinc-100"
          : "border-transparent text-zinc-500 hover:text-zinc-800 dark:hover:text-zinc-200"
      }`}
    >
      {children}
    </button>
  );
}

export const Presence = memo(function Presence({ others }: { others: Viewer[] }) {
  return (
    <div
      data-testid="presence"
      data-count={others.length}
      className="flex items-center gap-1.5 text-xs text-zinc-500"
      aria-label="Who else is viewing"
    >
      {others.length === 0 ? (
        <span>Only you</span>
      ) : (
        <>
          <div className="flex -space-x-1.5">
            {others.slice(0, 5).map((v) => (
              <span
                key={v.userId}
                data-testid="presence-viewer"
                title={v.name}
                className={`inline-flex size-6 items-center justify-center rounded-full text-[10px] font-semibold ring-2 ring-zinc-50 dark:ring-zinc-950 ${avatarColour(v.name)}`}
              >
                {initials(v.name)}
              </span>
            ))}
          </div>
          <span className="max-w-48 truncate">
            {others.map((v) => v.name).join(", ")} {others.length === 1 ? "is" : "are"} here
          </span>
        </>
      )}
    </div>
  );
});

export const ModeSwitcher = memo(function ModeSwitcher(props: {
  mode: string;
  bypassAvailable: boolean;
  disabledReason?: string;
  onSwitch: (mode: PermissionModeChoice) => Promise<string | undefined>;
}) {
  const { mode, bypassAvailable, disabledReason, onSwitch } = props;
  const [pending, setPending] = useState<PermissionModeChoice>();
  const [error, setError] = useState<string>();
  const choices = modeChoices(bypassAvailable);
  const known = choices.some((c) => c.value === mode);
  return (
    <div className="relative flex items-center gap-1.5">
      <label htmlFor="mode-select" className="text-xs text-zinc-500">
        Mode
      </label>
      <select
        id="mode-select"
        data-testid="mode-select"
        data-pending={pending ?? ""}
        value={mode}
        disabled={disabledReason !== undefined || pending !== undefined}
        title={disabledReason ?? choices.find((c) => c.value === mode)?.hint}
        aria-describedby={error ? "mode-error" : undefined}
        onChange={async (e) => {
          const next = e.target.value as PermissionModeChoice;
          if (next === mode) return;
          setPending(next);
          setError(undefined);
          const failure = await onSwitch(next);
          setPending(undefined);
          if (failure) setError(failure);
        }}
        className="field w-auto py-1 pr-7 text-xs disabled:cursor-not-allowed disabled:opacity-60"
      >
        {!known && <option value={mode}>{modeLabel(mode)}</option>}
        {choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
      {pending && (
        <span role="status" data-testid="mode-pending" className="text-xs whitespace-nowrap text-zinc-500">
          switching to {modeLabel(pending)}…
        </span>
      )}
      {error && (
        <span
          id="mode-error"
          role="alert"
          data-testid="mode-error"
          className="absolute top-full right-0 z-10 mt-1 w-64 rounded-md bg-red-50 px-2 py-1 text-xs text-red-800 shadow dark:bg-red-950 dark:text-red-300"
        >
          {error}
        </span>
      )}
    </div>
  );
});

export const StopButton = memo(function StopButton({
  canWrite,
  active,
  onStop,
}: {
  canWrite: boolean;
  active: boolean;
  onStop: () => Promise<string | undefined>;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  return (
    <div className="relative">
      <button
        type="button"
        data-testid="interrupt-button"
        className="btn-quiet py-1 text-xs"
        disabled={!canWrite || !active || busy}
        title={!canWrite ? "Viewers cannot stop a turn." : active ? "Stop the running turn (Esc)" : "Nothing is running"}
        aria-keyshortcuts={canWrite && active ? "Escape" : undefined}
        aria-describedby={error ? "interrupt-error" : undefined}
        onClick={async () => {
          setBusy(true);
          setError(undefined);
          const failure = await onStop();
          setBusy(false);
          if (failure) setError(failure);
        }}
      >
        <span aria-hidden className="size-2 rounded-[2px] bg-current" />
        {busy ? "Stopping…" : "Stop"}
      </button>
      {error && (
        <span
          id="interrupt-error"
          role="alert"
          data-testid="interrupt-error"
          className="absolute top-full right-0 z-10 mt-1 w-64 rounded-md bg-red-50 px-2 py-1 text-xs text-red-800 shadow dark:bg-red-950 dark:text-red-300"
        >
          {error}
        </span>
      )}
    </div>
  );
});
