/**
 * The scripted model for bench/approval-rtt.ts's real-CLI run, in its own process (a real model
 * is not in the sidecar's process either). argv: <tool calls per turn> <warm-up calls> <mean
 * pause ms>. Prints `model-server listening on <url>` once it serves.
 *
 * `[scenario:approval-rtt]` calls Bash that many times, "thinking" about the pause (±50 %)
 * before each call; `[scenario:approval-rtt-warm]` makes the warm-up calls without pauses.
 */
import { startModelServer } from "../../server/model-server/model-server";
import { callTool, say } from "../../server/model-server/scenario";

const [asks, warmAsks, gapMs] = process.argv.slice(2).map(Number) as [number, number, number];
const think = () => ({ delayMs: gapMs * (0.5 + Math.random()) });

const server = await startModelServer({
  scenarios: [
    {
      name: "approval-rtt",
      steps: [
        ...Array.from(
          { length: asks },
          (_, i) => () =>
            callTool("Bash", { command: `touch bench-${i}.txt`, description: `Touch file ${i}` }, think()),
        ),
        say("All files touched."),
      ],
    },
    {
      name: "approval-rtt-warm",
      steps: [
        ...Array.from({ length: warmAsks }, (_, i) =>
          callTool("Bash", { command: `touch warm-${i}.txt`, description: `Touch file ${i}` }),
        ),
        say("Warmed up."),
      ],
    },
  ],
});
console.log(`model-server listening on ${server.url}`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
