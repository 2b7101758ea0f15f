/**
 * `name{labels} value` samples of a Prometheus text exposition (comments and blank lines skipped),
 * keyed with the labels sorted by name, so tests need not know the order an exporter writes.
 */
export function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(normalize(line.slice(0, at)), Number(line.slice(at + 1)));
  }
  return samples;
}

function normalize(series: string): string {
  const open = series.indexOf("{");
  if (open < 0) return series;
  const pairs = [...series.slice(open + 1, -1).matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => `${m[1]}="${m[2]}"`);
  return `${series.slice(0, open)}{${pairs.sort().join(",")}}`;
}

/** The samples of one metric name, whatever their labels. */
export function samplesOf(samples: Map<string, number>, name: string): [string, number][] {
  return [...samples].filter(([key]) => key === name || key.startsWith(`${name}{`));
}
