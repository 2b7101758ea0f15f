"use client";

/**
 * Monaco's diff editor, served from this origin (`monaco-setup.ts`). Load this module with
 * `next/dynamic` and `ssr: false`; it touches `window`.
 */
import { DiffEditor, type DiffOnMount } from "@monaco-editor/react";
import { useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { DiffSkeleton } from "./diff-skeleton";
import { keepEditorWorker, useMonacoTheme } from "./monaco-setup";

/** What the file review drives in the editor. */
export interface ReviewDiffHandle {
  /** Replaces the right side as one undoable edit. */
  setModified(text: string): void;
  getModified(): string;
  revealLine(line: number): void;
}

export interface ReviewDiffProps {
  original: string;
  /** The right side's first text; later changes go through the handle, never this prop. */
  modified: string;
  language: string;
  readOnly?: boolean;
  /** The first height, before Monaco has measured its content. */
  height: number;
  /** The editor grows with its content (wrapped lines included) up to this. */
  maxHeight: number;
  /** Long files show only the changed regions with some context. */
  collapseUnchanged?: boolean;
  onChange?: (text: string) => void;
  onReady?: (handle: ReviewDiffHandle | null) => void;
  /** Once, when the editor first shows its computed diff (until then a caller may show something else). */
  onDiffShown?: () => void;
  /** What holds the editor's place while Monaco loads (default: a skeleton saying so). */
  loading?: ReactNode;
}

type DiffWidget = Parameters<DiffOnMount>[0];

const minHeight = 60;
/** A side narrower than this (px) has not been laid out yet: its content height means nothing. */
const minMeasuredWidth = 40;
const inlineBelow = 700;
/** Monaco's own "no diff result" failure (its worker had no model for a request): retried, never a page error. */
const noDiffResult = "no diff result available";
/** How long to wait for a computed diff before asking Monaco again, and how many times. */
const diffRetryMs = 3000;
const maxDiffRetries = 3;

export default function ReviewDiff({
  original,
  modified,
  language,
  readOnly = false,
  height,
  maxHeight,
  collapseUnchanged = false,
  onChange,
  onReady,
  onDiffShown,
  loading,
}: ReviewDiffProps) {
  const theme = useMonacoTheme();
  const [shownHeight, setShownHeight] = useState(height);
  const widget = useRef<DiffWidget | null>(null);
  const onChangeRef = useRef(onChange);
  const onReadyRef = useRef(onReady);
  const onDiffShownRef = useRef(onDiffShown);
  /** Asks Monaco to compute the diff again (set while mounted). */
  const recompute = useRef<(() => void) | null>(null);
  useLayoutEffect(() => {
    onChangeRef.current = onChange;
    onReadyRef.current = onReady;
    onDiffShownRef.current = onDiffShown;
  });

  // Monaco computes the diff in an async step nobody awaits: when its worker answers "no result"
  // (a model it had not been sent yet, on a page's first diff), the rejection reached the page as
  // an uncaught error and the diff stayed blank. Taken here while an editor is mounted, and the
  // diff asked for again.
  useEffect(() => {
    const onRejection = (event: PromiseRejectionEvent) => {
      const reason: unknown = event.reason;
      if (!(reason instanceof Error) || reason.message !== noDiffResult || !recompute.current) return;
      event.preventDefault();
      recompute.current();
    };
    window.addEventListener("unhandledrejection", onRejection);
    return () => window.removeEventListener("unhandledrejection", onRejection);
  }, []);

  // Options keep one identity: the wrapper re-applies them whenever the object changes.
  const options = useMemo(
    () => ({
      readOnly,
      originalEditable: false,
      renderSideBySide: true,
      useInlineViewWhenSpaceIsLimited: true,
      renderSideBySideInlineBreakpoint: inlineBelow,
      renderGutterMenu: false,
      // Reverting a block from the gutter would bypass the hunk controls' bookkeeping.
      renderMarginRevertIcon: false,
      ignoreTrimWhitespace: false,
      renderOverviewRuler: false,
      minimap: { enabled: false },
      scrollBeyondLastLine: false,
      fontSize: 12,
      lineHeight: 18,
      lineNumbersMinChars: 3,
      folding: false,
      glyphMargin: false,
      wordWrap: "on" as const,
      diffWordWrap: "on" as const,
      hideUnchangedRegions: {
        enabled: collapseUnchanged,
        contextLineCount: 3,
        minimumLineCount: 4,
        revealLineCount: 10,
      },
      scrollbar: { alwaysConsumeMouseWheel: false, verticalScrollbarSize: 10, horizontalScrollbarSize: 10 },
      padding: { top: 4, bottom: 4 },
    }),
    [readOnly, collapseUnchanged],
  );

  const onMount: DiffOnMount = (editor, monaco) => {
    keepEditorWorker(monaco);
    widget.current = editor;
    const left = editor.getOriginalEditor();
    const right = editor.getModifiedEditor();
    // Read once a frame, after the two sides are done changing. Before its first layout each
    // side is a few pixels wide (or less) and every line wraps at that width: its content height
    // is then the maximum, and the sides report their new layouts one after the other, the left
    // one's height still the old one's when the right one's is new. Read at once, the box grew to
    // its maximum for a frame or more and the card's buttons jumped away from the pointer.
    let frame = 0;
    const measure = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        if (widget.current !== editor) return;
        if (Math.min(left.getLayoutInfo().contentWidth, right.getLayoutInfo().contentWidth) < minMeasuredWidth) return;
        const content = Math.max(left.getContentHeight(), right.getContentHeight());
        setShownHeight(Math.min(Math.max(content + 2, minHeight), maxHeight));
      });
    };
    // The inline layout (used while the widget is narrow, as before its first layout) turns
    // wrapping off on the left side, and nothing turns it back on when the sides split.
    left.onDidLayoutChange(() => {
      const wrapOff = left.getOption(monaco.editor.EditorOption.wordWrapOverride2) === "off";
      if (wrapOff && editor.getContainerDomNode().clientWidth >= inlineBelow)
        left.updateOptions({ wordWrapOverride2: "inherit" });
    });
    left.onDidContentSizeChange(measure);
    right.onDidContentSizeChange(measure);
    left.onDidLayoutChange(measure);
    right.onDidLayoutChange(measure);
    measure();
    right.onDidChangeModelContent(() => onChangeRef.current?.(right.getValue()));
    // The diff is shown once Monaco has computed it; until then it asks again every few seconds.
    let shown = false;
    let retries = 0;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    const retry = () => {
      if (shown || widget.current !== editor || retries >= maxDiffRetries) return;
      retries += 1;
      // A changed computation option makes Monaco compute the diff again (the value is the default's neighbour).
      editor.updateOptions({ maxComputationTime: 5000 + retries });
      clearTimeout(retryTimer);
      retryTimer = setTimeout(retry, diffRetryMs);
    };
    recompute.current = retry;
    retryTimer = setTimeout(retry, diffRetryMs);
    editor.onDidUpdateDiff(() => {
      if (shown || widget.current !== editor) return;
      shown = true;
      clearTimeout(retryTimer);
      onDiffShownRef.current?.();
    });
    editor.onDidDispose(() => clearTimeout(retryTimer));
    onReadyRef.current?.({
      setModified(text) {
        const model = right.getModel();
        if (!model || model.getValue() === text) return;
        right.pushUndoStop();
        right.executeEdits("hunk-toggle", [{ range: model.getFullModelRange(), text, forceMoveMarkers: true }]);
        right.pushUndoStop();
      },
      getModified: () => right.getValue(),
      revealLine(line) {
        right.revealLineInCenterIfOutsideViewport(line);
        right.setPosition({ lineNumber: line, column: 1 });
      },
    });
  };

  // The wrapper disposes the two models before the widget, which Monaco reports as a bug
  // ("TextModel got disposed before DiffEditorWidget model got reset"). Keep the models from
  // it and detach them here: layout cleanups run before the wrapper's passive one.
  useLayoutEffect(
    () => () => {
      const editor = widget.current;
      widget.current = null;
      recompute.current = null;
      onReadyRef.current?.(null);
      if (!editor) return;
      const models = editor.getModel();
      editor.setModel(null);
      models?.original.dispose();
      models?.modified.dispose();
    },
    [],
  );

  return (
    <DiffEditor
      height={shownHeight}
      original={original}
      modified={modified}
      language={language}
      theme={theme}
      options={options}
      keepCurrentOriginalModel
      keepCurrentModifiedModel
      onMount={onMount}
      loading={loading ?? <DiffSkeleton height={shownHeight} />}
    />
  );
}
