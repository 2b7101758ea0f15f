import Link from "next/link";
import { SignUpForm } from "@/components/sign-up-form";
import { readSignupPageState } from "@/server/web/accounts";

export const dynamic = "force-dynamic";

export default async function SignUpPage() {
  const state = await readSignupPageState();
  if (state.kind === "refused") {
    return (
      <div className="card space-y-4" data-testid="signup-refused">
        <h2 className="text-lg font-medium">Sign-up needs an invitation</h2>
        <p data-testid="signup-policy-message" className="text-sm">
          {state.message}
        </p>
        <p className="text-sm text-zinc-500">An invitation link lets you set your password and join the right workspace.</p>
        <p className="text-center text-sm text-zinc-500">
          Already have an account?{" "}
          <Link href="/signin" className="text-indigo-600 hover:underline">
            Sign in
          </Link>
        </p>
      </div>
    );
  }
  return <SignUpForm firstAccount={state.kind === "first"} />;
}
