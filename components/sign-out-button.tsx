"use client";

import { signOut } from "next-auth/react";

export function SignOutButton() {
  return (
    <button data-testid="signout" type="button" className="btn-quiet py-1" onClick={() => void signOut({ callbackUrl: "/signin" })}>
      Sign out
    </button>
  );
}
