import { SignUpForm } from "@/components/sign-up-form";

export const dynamic = "force-dynamic";

export default function SignUpPage() {
  return <SignUpForm />;
}
