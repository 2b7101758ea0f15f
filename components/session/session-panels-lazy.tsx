"use client";

/**
 * The session page's panels that few visits open, loaded when first shown rather than with the
 * page: the Changes tab, the rewind dialog and the raw event log. The conversation (what every
 * visit shows first) does not wait for their code; each shows a short placeholder while it loads.
 */
import dynamic from "next/dynamic";

const loadingPanel = () => <p className="py-10 text-center text-sm text-zinc-500">Loading…</p>;

export const ChangesPanel = dynamic(() => import("@/components/changes/changes-panel").then((m) => m.ChangesPanel), { loading: loadingPanel });
export const RewindDialog = dynamic(() => import("@/components/changes/rewind-dialog").then((m) => m.RewindDialog), { ssr: false });
export const RawLog = dynamic(() => import("./raw-log").then((m) => m.RawLog), { loading: loadingPanel });
