"use client";

/**
 * Monaco's code editor for one workspace file, served from this origin like the approval
 * review's diff (`public/monaco/vs`). Load with `next/dynamic` and `ssr: false`.
 */
import Editor, { type OnMount } from "@monaco-editor/react";
import { useLayoutEffect, useRef } from "react";
import { keepEditorWorker, useMonacoTheme } from "@/components/approval/monaco-setup";

/** What the file editor drives in Monaco. */
export interface CodeEditorHandle {
  getValue(): string;
  /** Replaces the whole text (a reload from disk), keeping undo. */
  setValue(text: string): void;
}

export interface CodeEditorProps {
  /** The first text; later replacements go through the handle. */
  initial: string;
  language: string;
  readOnly: boolean;
  onChange(text: string): void;
  onSave(): void;
  onReady(handle: CodeEditorHandle | null): void;
}

export default function CodeEditor({ initial, language, readOnly, onChange, onSave, onReady }: CodeEditorProps) {
  const theme = useMonacoTheme();
  const latest = useRef({ onChange, onSave, onReady });
  useLayoutEffect(() => {
    latest.current = { onChange, onSave, onReady };
  });

  const onMount: OnMount = (editor, monaco) => {
    keepEditorWorker(monaco);
    editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyS, () => latest.current.onSave());
    editor.onDidChangeModelContent(() => latest.current.onChange(editor.getValue()));
    latest.current.onReady({
      getValue: () => editor.getValue(),
      setValue(text) {
        const model = editor.getModel();
        if (!model || model.getValue() === text) return;
        editor.pushUndoStop();
        editor.executeEdits("reload", [{ range: model.getFullModelRange(), text, forceMoveMarkers: true }]);
        editor.pushUndoStop();
      },
    });
  };
  useLayoutEffect(() => () => latest.current.onReady(null), []);

  return (
    <Editor
      height="60vh"
      defaultValue={initial}
      language={language}
      theme={theme}
      onMount={onMount}
      options={{
        readOnly,
        domReadOnly: readOnly,
        minimap: { enabled: false },
        fontSize: 12,
        lineHeight: 18,
        scrollBeyondLastLine: false,
        automaticLayout: true,
        wordWrap: "off",
      }}
      loading={<div className="h-[60vh] motion-safe:animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />}
    />
  );
}
