import type { Metadata } from "next";
import { ApprovalInbox } from "@/components/approval/approval-inbox";

export const metadata: Metadata = { title: "Approvals · Conduit" };

export default function InboxPage() {
  return <ApprovalInbox />;
}
