/** A Chromium CPU profile of a page (CDP), and where it spent its self time: by script and by function. */
import type { Page } from "@playwright/test";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

/** Prints the scripts and the `functions` functions with the most self time. */
export function printProfile(title: string, profile: CpuProfile | undefined, functions = 20): void {
  if (!profile) return;
  const self = new Map<number, number>();
  (profile.samples ?? []).forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas?.[i] ?? 0)));
  const byFunction = new Map<string, number>();
  const byScript = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    total += us;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    const file = url ? (new URL(url, "http://x").pathname.split("/").pop() ?? url) : "(native)";
    const name = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}:${columnNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byScript.set(file, (byScript.get(file) ?? 0) + us);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `      ${(us / 1000).toFixed(0).padStart(6)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
  console.log(`  CPU profile of ${title}, ${(total / 1000).toFixed(0)} ms sampled; by script:`);
  console.log(top(byScript, 8).join("\n"));
  console.log("    by function (self time):");
  console.log(top(byFunction, functions).join("\n"));
}

/** Starts sampling `page`'s CPU (every 200 µs); the returned function stops and returns the profile. */
export async function startCpuProfile(page: Page): Promise<() => Promise<CpuProfile>> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  return async () => {
    const { profile } = await cdp.send("Profiler.stop");
    await cdp.detach();
    return profile as unknown as CpuProfile;
  };
}
