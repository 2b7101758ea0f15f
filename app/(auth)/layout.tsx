import type { ReactNode } from "react";
import { DemoBanner } from "@/components/demo-banner";
import { isDemoModel } from "@/server/web/demo";

export default function AuthLayout({ children }: { children: ReactNode }) {
  return (
    <div className="flex min-h-screen flex-col">
      {isDemoModel() && <DemoBanner />}
      <main className="flex flex-1 items-center justify-center p-6">
        <div className="w-full max-w-sm">
          <h1 className="mb-6 text-center text-2xl font-semibold tracking-tight">Conduit</h1>
          {children}
        </div>
      </main>
    </div>
  );
}
