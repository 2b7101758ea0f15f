"use client";

import { signOut } from "next-auth/react";
import { useHydrated } from "@/components/use-hydrated";

export function SignOutButton({ callbackUrl = "/signin" }: { callbackUrl?: string }) {
  const hydrated = useHydrated();
  return (
    <button data-testid="signout" type="button" className="btn-quiet py-1" disabled={!hydrated} onClick={() => void signOut({ callbackUrl })}>
      Sign out
    </button>
  );
}
