"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

const sections = [
  { href: "/admin", label: "Users", match: (p: string) => p === "/admin" || p.startsWith("/admin/users") },
  { href: "/admin/invitations", label: "Invitations", match: (p: string) => p.startsWith("/admin/invitations") },
  { href: "/admin/audit", label: "Audit log", match: (p: string) => p.startsWith("/admin/audit") },
  { href: "/admin/instance", label: "Instance", match: (p: string) => p.startsWith("/admin/instance") },
] as const;

/** The admin area's sections; the current one is marked for screen readers too. */
export function AdminNav() {
  const pathname = usePathname() ?? "";
  return (
    <nav
      aria-label="Administration"
      data-testid="admin-nav"
      className="flex flex-wrap gap-x-1 border-b border-zinc-200 text-sm dark:border-zinc-800"
    >
      {sections.map((s) => {
        const current = s.match(pathname);
        return (
          <Link
            key={s.href}
            href={s.href}
            aria-current={current ? "page" : undefined}
            className={`-mb-px border-b-2 px-3 py-2 ${
              current
                ? "border-indigo-600 font-medium text-zinc-900 dark:text-zinc-100"
                : "border-transparent text-zinc-500 hover:text-zinc-900 dark:hover:text-zinc-100"
            }`}
          >
            {s.label}
          </Link>
        );
      })}
    </nav>
  );
}
