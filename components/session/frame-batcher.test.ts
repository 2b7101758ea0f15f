import { describe, expect, it } from "vitest";
import { batchTimeoutMs, createFrameBatcher, type FrameScheduler } from "./frame-batcher";

/** A scheduler the test drives: frames and timers run when the test says. */
function manualScheduler() {
  let next = 1;
  let hidden = false;
  let time = 0;
  const frames = new Map<number, () => void>();
  const timers = new Map<number, { run: () => void; ms: number }>();
  const scheduler: FrameScheduler = {
    requestFrame: (run) => (frames.set(next, run), next++),
    cancelFrame: (handle) => void frames.delete(handle),
    setTimer: (run, ms) => (timers.set(next, { run, ms }), next++) as unknown as ReturnType<typeof setTimeout>,
    clearTimer: (handle) => void timers.delete(handle as unknown as number),
    hidden: () => hidden,
    now: () => time,
  };
  return {
    scheduler,
    frame() {
      const due = [...frames.values()];
      frames.clear();
      for (const run of due) run();
    },
    timeout() {
      const due = [...timers.values()];
      timers.clear();
      for (const { run } of due) run();
    },
    pending: () => ({ frames: frames.size, timers: [...timers.values()].map((t) => t.ms) }),
    hide(value: boolean) {
      hidden = value;
    },
    advance(ms: number) {
      time += ms;
    },
  };
}

/** A batcher on a {@link manualScheduler}, keeping the frames coming `warmMs` after each item, and the batches it handed over. */
function batching<T>(warmMs: number) {
  const clock = manualScheduler();
  const batches: T[][] = [];
  const batcher = createFrameBatcher<T>((items) => batches.push(items), clock.scheduler, warmMs);
  return { clock, batches, batcher };
}

describe("createFrameBatcher", () => {
  it("hands over everything pushed between two frames at once, in order, at the frame", () => {
    const { clock, batches, batcher } = batching<number>(0);
    batcher.push(1);
    batcher.push(2);
    batcher.push(3);
    expect(batches).toEqual([]);
    expect(clock.pending()).toEqual({ frames: 1, timers: [batchTimeoutMs] });
    clock.frame();
    expect(batches).toEqual([[1, 2, 3]]);
    // the frame's handover cancelled the fallback timer
    expect(clock.pending()).toEqual({ frames: 0, timers: [] });
    batcher.push(4);
    clock.frame();
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it("hands over each item as it comes while the tab is hidden, what it held first", () => {
    const { clock, batches, batcher } = batching<number>(0);
    batcher.push(1);
    clock.hide(true);
    batcher.push(2);
    expect(batches).toEqual([[1, 2]]);
    batcher.push(3);
    expect(batches).toEqual([[1, 2], [3]]);
    expect(clock.pending()).toEqual({ frames: 0, timers: [] });
    clock.hide(false);
    batcher.push(4);
    expect(batches).toEqual([[1, 2], [3]]);
    clock.frame();
    expect(batches).toEqual([[1, 2], [3], [4]]);
  });

  it("hands over on the timer when no frame comes", () => {
    const { clock, batches, batcher } = batching<string>(0);
    batcher.push("a");
    batcher.push("b");
    clock.timeout();
    expect(batches).toEqual([["a", "b"]]);
    expect(clock.pending()).toEqual({ frames: 0, timers: [] });
    // a frame that comes later finds nothing to hand over
    clock.frame();
    expect(batches).toEqual([["a", "b"]]);
  });

  it("flushes on demand and then waits for the next push", () => {
    const { clock, batches, batcher } = batching<number>(0);
    batcher.flush();
    expect(batches).toEqual([]);
    batcher.push(1);
    batcher.flush();
    expect(batches).toEqual([[1]]);
    expect(clock.pending()).toEqual({ frames: 0, timers: [] });
    batcher.push(2);
    expect(clock.pending().frames).toBe(1);
  });

  it("drops what it holds when cancelled and ignores later pushes", () => {
    const { clock, batches, batcher } = batching<number>(0);
    batcher.push(1);
    batcher.cancel();
    expect(clock.pending()).toEqual({ frames: 0, timers: [] });
    batcher.push(2);
    clock.frame();
    clock.timeout();
    batcher.flush();
    expect(batches).toEqual([]);
  });

  it("keeps the frames coming for warmMs after the last item, one frame asked for at a time", () => {
    const { clock, batches, batcher } = batching<number>(50);
    batcher.push(1);
    clock.frame();
    expect(batches).toEqual([[1]]);
    // nothing held, but the next frame is asked for already
    expect(clock.pending()).toEqual({ frames: 1, timers: [] });
    clock.advance(30);
    clock.frame();
    expect(clock.pending()).toEqual({ frames: 1, timers: [] });
    // an item while the frames come joins the frame asked for (no second one) and goes at it
    batcher.push(2);
    expect(clock.pending()).toEqual({ frames: 1, timers: [batchTimeoutMs] });
    clock.frame();
    expect(batches).toEqual([[1], [2]]);
    // 50 ms from the last item the frames stop
    clock.advance(49);
    clock.frame();
    expect(clock.pending().frames).toBe(1);
    clock.advance(1);
    clock.frame();
    expect(clock.pending()).toEqual({ frames: 0, timers: [] });
    expect(batches).toEqual([[1], [2]]);
  });

  it("asks for no frames while hidden or after cancel", () => {
    const { clock, batches, batcher } = batching<number>(50);
    clock.hide(true);
    batcher.push(1);
    expect(batches).toEqual([[1]]);
    expect(clock.pending()).toEqual({ frames: 0, timers: [] });
    clock.hide(false);
    batcher.push(2);
    clock.frame();
    expect(clock.pending().frames).toBe(1);
    batcher.cancel();
    expect(clock.pending()).toEqual({ frames: 0, timers: [] });
    clock.frame();
    expect(batches).toEqual([[1], [2]]);
  });
});
