"use client";

import { useEffect, useState } from "react";

/**
 * False on the first render, true once the browser has had a chance to paint it (the task after
 * the next animation frame; at most `fallbackMs` later where frames do not run, as in a hidden
 * tab). Heavy children mounted behind it (Monaco's diff editor) no longer hold back the paint
 * of what is around them: an approval card and its buttons show at once, the diff fills in after.
 */
export function useAfterPaint(fallbackMs = 100): boolean {
  const [painted, setPainted] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = () => setPainted(true);
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(done, 0);
    });
    const fallback = setTimeout(done, fallbackMs);
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
      clearTimeout(fallback);
    };
  }, [fallbackMs]);
  return painted;
}
