import { redirect } from "next/navigation";
import { getDb } from "@/server/db/client";
import { findCurrentUser } from "@/server/web/auth";

export const dynamic = "force-dynamic";

export default async function Home() {
  const user = await findCurrentUser();
  if (user) redirect("/workspaces");
  // a new Conduit: its first person creates the admin account, there is nothing to sign in to
  redirect((await getDb().user.count()) === 0 ? "/signup" : "/signin");
}
