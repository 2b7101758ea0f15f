"use client";

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Socket } from "socket.io-client";
import type { WireEvent } from "@/server/shared/wire/session";
import type {
  CancelQueuedResult,
  ContextUsage,
  FileSuggestions,
  ModelList,
  SetThinkingResult,
  SlashCommandInfo,
  SlashCommandList,
} from "@/server/shared/wire/session-controls";
import { ackMessage, newCommandId } from "../wire-client";
import { controlCommand, emitControl } from "./controls-client";
import { SessionFactsFolder } from "./session-facts";

/**
 * The session's CLI controls for the page: the model list, the context meter (asked again after
 * every turn), the slash commands (names from the log's `init`, descriptions from the CLI), file
 * suggestions, the queue and its cancel, the thinking budget.
 */
export function useSessionControls(options: {
  socket: Socket | undefined;
  sessionId: string;
  events: readonly WireEvent[];
  /** The live subscription is open (the CLI may be asked). */
  ready: boolean;
}) {
  const { socket, sessionId, events, ready } = options;
  // only the events appended since the last render are folded; unchanged facts keep their identity
  const [folder] = useState(() => new SessionFactsFolder());
  const facts = useMemo(() => folder.update(events), [folder, events]);
  const [models, setModels] = useState<ModelList>();
  const [context, setContext] = useState<{ usage?: ContextUsage; error?: string; loading: boolean }>({ loading: false });
  const [described, setDescribed] = useState<SlashCommandInfo[]>();
  const commandsAsked = useRef<string>("");

  const loadModels = useCallback(async () => {
    if (!socket) return;
    const ack = await emitControl<ModelList>(socket, controlCommand.listModels, { sessionId });
    if (ack.ok) setModels(ack.data);
  }, [socket, sessionId]);

  const refreshContext = useCallback(async () => {
    if (!socket) return;
    setContext((c) => ({ ...c, loading: true }));
    const ack = await emitControl<ContextUsage>(socket, controlCommand.contextUsage, { sessionId });
    setContext((c) => (ack.ok ? { usage: ack.data, loading: false } : { usage: c.usage, error: ackMessage(ack), loading: false }));
  }, [socket, sessionId]);

  // The model list once per connection; the meter on open and after every turn.
  useEffect(() => {
    if (ready) void loadModels();
  }, [ready, loadModels]);
  useEffect(() => {
    if (ready) void refreshContext();
  }, [ready, facts.results, refreshContext]);

  // Descriptions for the commands the CLI announced: asked again when the announced set changes.
  const names = facts.slashCommandNames.join(" ");
  useEffect(() => {
    if (!ready || !socket || commandsAsked.current === `${sessionId}:${names}`) return;
    commandsAsked.current = `${sessionId}:${names}`;
    void emitControl<SlashCommandList>(socket, controlCommand.slashCommands, { sessionId }).then((ack) => {
      if (ack.ok) setDescribed(ack.data.commands);
    });
  }, [ready, socket, sessionId, names]);

  const slashCommands = useMemo(() => {
    const byName = new Map((described ?? []).map((c) => [c.name, c]));
    const announced = facts.slashCommandNames.map((name) => byName.get(name) ?? { name });
    // commands the CLI described but its init did not list (before the first turn, no init exists)
    for (const c of described ?? []) if (!facts.slashCommandNames.includes(c.name)) announced.push(c);
    return announced;
  }, [described, facts.slashCommandNames]);

  const suggestFiles = useCallback(
    async (query: string): Promise<{ paths: string[] } | { error: string }> => {
      if (!socket) return { error: "Not connected." };
      const ack = await emitControl<FileSuggestions>(socket, controlCommand.fileSuggestions, { sessionId, query });
      return ack.ok ? { paths: ack.data.suggestions.map((s) => s.path) } : { error: ackMessage(ack) ?? "No suggestions." };
    },
    [socket, sessionId],
  );

  const cancelQueued = useCallback(
    async (promptSeq: number): Promise<string | undefined> => {
      if (!socket) return "Not connected.";
      const ack = await emitControl<CancelQueuedResult>(socket, controlCommand.cancelQueued, {
        sessionId,
        promptSeq,
        commandId: newCommandId(),
      });
      if (!ack.ok) return ackMessage(ack);
      return ack.data.cancelled ? undefined : "Too late: it has already started.";
    },
    [socket, sessionId],
  );

  const setThinking = useCallback(
    async (budget: number | null): Promise<string | undefined> => {
      if (!socket) return "Not connected.";
      const ack = await emitControl<SetThinkingResult>(socket, controlCommand.setThinking, {
        sessionId,
        maxThinkingTokens: budget,
        commandId: newCommandId(),
      });
      return ackMessage(ack);
    },
    [socket, sessionId],
  );

  const { thinking, currentModel } = facts;

  const currentModelInfo = models?.models.find((m) => m.value === currentModel || m.resolvedModel === currentModel);

  return {
    currentModel,
    currentModelInfo,
    models,
    loadModels,
    context,
    refreshContext,
    slashCommands,
    suggestFiles,
    queued: facts.queued,
    cancelQueued,
    thinking,
    setThinking,
  };
}
