-- AlterTable
ALTER TABLE "Session" ADD COLUMN "baseBranch" TEXT;
ALTER TABLE "Session" ADD COLUMN "worktreeBranch" TEXT;
ALTER TABLE "Session" ADD COLUMN "worktreeClosedAt" DATETIME;
ALTER TABLE "Session" ADD COLUMN "worktreePath" TEXT;
