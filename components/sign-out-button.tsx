"use client";

import { signOut } from "next-auth/react";

export function SignOutButton({ callbackUrl = "/signin" }: { callbackUrl?: string }) {
  return (
    <button data-testid="signout" type="button" className="btn-quiet py-1" onClick={() => void signOut({ callbackUrl })}>
      Sign out
    </button>
  );
}
