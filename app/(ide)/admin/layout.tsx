import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AdminNav } from "@/components/admin/admin-nav";
import { requireAdminPage } from "@/server/web/admin";

export const dynamic = "force-dynamic";

/** The admin area: administrators only; everyone else gets the 404 page. */
export const metadata: Metadata = { title: "Admin" };

export default async function AdminLayout({ children }: { children: ReactNode }) {
  await requireAdminPage();
  return (
    <div className="space-y-4" data-testid="admin-area">
      <h1 className="text-xl font-semibold">Administration</h1>
      <AdminNav />
      {children}
    </div>
  );
}
