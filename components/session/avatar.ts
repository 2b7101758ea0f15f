/** A person's avatar in the session: a stable colour and their initials. */
const avatarColours = [
  "bg-indigo-600 text-white",
  "bg-emerald-600 text-white",
  "bg-sky-600 text-white",
  "bg-fuchsia-600 text-white",
  "bg-amber-600 text-white",
  "bg-rose-600 text-white",
  "bg-teal-600 text-white",
  "bg-violet-600 text-white",
];

/** A stable colour per person, so a shared conversation shows who said what at a glance. */
export function avatarColour(name: string): string {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return avatarColours[h % avatarColours.length]!;
}

/** One or two letters of a person's name (or e-mail), for their avatar. */
export function initials(name: string): string {
  const parts = name
    .trim()
    .split(/[\s@._-]+/)
    .filter(Boolean);
  return ((parts[0]?.[0] ?? "?") + (parts[1]?.[0] ?? "")).toUpperCase();
}
