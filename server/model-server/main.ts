// Runs the scripted model server on its own: `tsx server/model-server/main.ts --port 4100`.
// Serves the demo scenarios, so the offline demo points ANTHROPIC_BASE_URL at it.
import { parseArgs } from "node:util";
import { startModelServer } from "./model-server";

const usage = "usage: tsx server/model-server/main.ts [--port N] [--host 127.0.0.1] [--no-demo] [--quiet]";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      "no-demo": { type: "boolean", default: false },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`invalid --port ${values.port}\n${usage}`);
    process.exitCode = 2;
    return;
  }
  const server = await startModelServer({
    port,
    host: values.host,
    demo: !values["no-demo"],
    log: values.quiet ? undefined : (line) => console.log(line),
  });
  // Scripts wait for this exact line to learn the port.
  console.log(`model-server listening on ${server.url}`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`model-server stopping (${signal})`);
    void server.close().then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
