"use client";

import { useEffect, useState } from "react";
import type { ModelList } from "@/server/shared/wire/session-controls";
import { useSocket } from "../use-socket";
import { controlCommand, emitControl } from "./controls-client";

/**
 * The model field of the new-session form (`--model`): the CLI's model list when this sidecar
 * has one (any CLI it ran answered `list_models`), else a free text field.
 */
export function NewSessionModel({ slug }: { slug: string }) {
  const { socket } = useSocket();
  const [list, setList] = useState<ModelList>();
  useEffect(() => {
    if (!socket) return;
    let alive = true;
    void emitControl<ModelList>(socket, controlCommand.modelCatalog, { workspace: slug }).then((ack) => {
      if (alive && ack.ok) setList(ack.data);
    });
    return () => {
      alive = false;
    };
  }, [socket, slug]);
  const models = list?.models ?? [];
  return (
    <label className="space-y-1 text-sm">
      <span className="block text-xs text-zinc-500">Model</span>
      {models.length > 0 ? (
        <select data-testid="session-new-model" name="model" defaultValue="" className="field w-auto py-1.5">
          <option value="">CLI default</option>
          {models
            .filter((m) => m.value !== "default")
            .map((m) => (
              <option key={m.value} value={m.value} title={m.description}>
                {m.displayName}
              </option>
            ))}
        </select>
      ) : (
        <input
          data-testid="session-new-model"
          name="model"
          maxLength={100}
          placeholder="CLI default"
          title="No CLI has listed its models yet; type a model name or leave empty"
          className="field w-48 py-1.5 font-mono"
        />
      )}
    </label>
  );
}
