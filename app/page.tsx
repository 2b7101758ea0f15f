import { redirect } from "next/navigation";
import { findCurrentUser } from "@/server/web/auth";

export const dynamic = "force-dynamic";

export default async function Home() {
  const user = await findCurrentUser();
  redirect(user ? "/workspaces" : "/signin");
}
