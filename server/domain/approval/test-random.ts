/**
 * A small seeded generator for the property tests of this folder: the same seed gives the
 * same cases, so a failure names its seed and replays exactly. (mulberry32)
 */
export interface Random {
  next(): number;
  int(maxExclusive: number): number;
  pick<T>(items: readonly T[]): T;
  bool(probability?: number): boolean;
}

/** A generator seeded with `seed`. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (max) => Math.floor(next() * max),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    bool: (p = 0.5) => next() < p,
  };
}

const WORDS = ["alpha", "beta", "x", "", "  indent", "ünïcödé", "😀 emoji", "tab\there", "end;", "alpha", "beta"];
const LINE_ENDS = ["\n", "\n", "\n", "\r\n"];

/** Text with repeated lines, empty lines, unicode and (sometimes) CRLF or no final newline. */
export function randomText(r: Random, options: { crlf?: boolean; maxLines?: number } = {}): string {
  const lines = r.int(options.maxLines ?? 12);
  const ending = options.crlf === undefined ? null : options.crlf ? "\r\n" : "\n";
  let text = "";
  for (let i = 0; i < lines; i++) {
    const line = Array.from({ length: 1 + r.int(3) }, () => r.pick(WORDS)).join(" ");
    const isLast = i === lines - 1;
    text += line + (isLast && r.bool(0.3) ? "" : (ending ?? r.pick(LINE_ENDS)));
  }
  return text;
}

/** A few random line- and character-level edits of `text`, keeping its line ending style when `eol` is given. */
export function randomEdit(r: Random, text: string, eol?: "\n" | "\r\n"): string {
  let out = text;
  const edits = 1 + r.int(3);
  for (let e = 0; e < edits; e++) {
    const lines = out.split(eol ?? "\n");
    const at = r.int(lines.length + 1);
    switch (r.int(6)) {
      case 0:
        lines.splice(at, 0, r.pick(WORDS) + " new");
        break;
      case 1:
        if (lines.length > 0) lines.splice(Math.min(at, lines.length - 1), 1);
        break;
      case 2:
        if (lines.length > 0) lines[Math.min(at, lines.length - 1)] = r.pick(WORDS);
        break;
      case 3: {
        const i = Math.min(at, lines.length - 1);
        if (i >= 0) lines[i] = `${lines[i]}${r.pick(["!", "ü", "😀", " "])}`;
        break;
      }
      case 4:
        lines.push(r.pick(WORDS));
        break;
      default:
        lines.splice(at, 0, lines[Math.max(0, at - 1)] ?? "dup");
    }
    out = lines.join(eol ?? "\n");
    if (r.bool(0.15)) out = out.endsWith(eol ?? "\n") ? out.slice(0, -(eol ?? "\n").length) : out + (eol ?? "\n");
  }
  return out;
}
