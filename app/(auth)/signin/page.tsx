import { SignInForm } from "@/components/sign-in-form";

export const dynamic = "force-dynamic";

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string; error?: string }> }) {
  const { callbackUrl, error } = await searchParams;
  return <SignInForm callbackUrl={safeCallback(callbackUrl)} initialError={error} />;
}

function safeCallback(url: string | undefined): string {
  // only same-site paths: an absolute URL here would be an open redirect
  return url && url.startsWith("/") && !url.startsWith("//") ? url : "/workspaces";
}
