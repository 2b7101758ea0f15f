import pino from "pino";

/** The web process's logger; secrets are redacted by path. */
export const logger = pino({
  name: "web",
  level: process.env.LOG_LEVEL ?? "info",
  redact: ["password", "*.password", "passwordHash", "*.passwordHash", "token", "*.token"],
});
