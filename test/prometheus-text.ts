/** `name{labels} value` samples of a Prometheus text exposition (comments and blank lines skipped). */
export function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** The samples of one metric name, whatever their labels. */
export function samplesOf(samples: Map<string, number>, name: string): [string, number][] {
  return [...samples].filter(([key]) => key === name || key.startsWith(`${name}{`));
}
