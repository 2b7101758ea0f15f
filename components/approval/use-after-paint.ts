"use client";

import { useEffect, useState } from "react";

/**
 * False on the first render, true once the browser has had a chance to paint it (the task after
 * the next animation frame; in a hidden tab, where frames do not run, after `fallbackMs`). Heavy
 * children mounted behind it (Monaco's diff editor) no longer hold back the paint of what is
 * around them: an approval card and its buttons show at once, the diff fills in after. A visible
 * page always waits for its frame: on a busy CPU the next frame can be more than `fallbackMs`
 * away, and a timer firing first mounted Monaco before the card had ever been painted.
 */
export function useAfterPaint(fallbackMs = 100): boolean {
  const [painted, setPainted] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = () => setPainted(true);
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(done, 0);
    });
    const fallback = document.visibilityState === "hidden" ? setTimeout(done, fallbackMs) : undefined;
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
      clearTimeout(fallback);
    };
  }, [fallbackMs]);
  return painted;
}
