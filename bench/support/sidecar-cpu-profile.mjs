// Preloaded into a sidecar by bench/cluster.ts (CLUSTER_PROFILE_DIR): `--cpu-prof` is refused in
// NODE_OPTIONS, so the V8 profiler is started here through the inspector, and SIGUSR2 stops it and
// writes `<CLUSTER_PROFILE_DIR>/<CONDUIT_SIDECAR_ID>-<pid>.cpuprofile` (Chrome DevTools and
// speedscope read it). The CLI children do not inherit NODE_OPTIONS (their environment is an
// allow-list), so only the sidecar is profiled.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import path from "node:path";

const dir = process.env.CLUSTER_PROFILE_DIR;
// CLUSTER_PROFILE_WINDOW=relay or =phases: the profile starts at the first SIGUSR2 (the bench sends
// it just before the in-phase relay) instead of at boot; the bench's second one ends it.
const fromBoot = (process.env.CLUSTER_PROFILE_WINDOW ?? "boot") === "boot";
if (dir) {
  const session = new Session();
  session.connect();
  let running = false;
  const start = () => {
    running = true;
    session.post("Profiler.enable", () =>
      session.post("Profiler.setSamplingInterval", { interval: 500 }, () => session.post("Profiler.start")),
    );
  };
  if (fromBoot) start();
  process.on("SIGUSR2", () => {
    if (!running) return start();
    running = false;
    session.post("Profiler.stop", (err, result) => {
      if (err) return;
      const file = path.join(dir, `${process.env.CONDUIT_SIDECAR_ID ?? "sidecar"}-${process.pid}.cpuprofile`);
      writeFileSync(file, JSON.stringify(result.profile));
    });
  });
}
