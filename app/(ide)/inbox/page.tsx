import type { Metadata } from "next";
import { ApprovalInbox } from "@/components/approval/approval-inbox";

export const metadata: Metadata = { title: "Approvals" };

export default function InboxPage() {
  return <ApprovalInbox />;
}
