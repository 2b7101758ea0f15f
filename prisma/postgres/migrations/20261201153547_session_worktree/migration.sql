-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "baseBranch" TEXT,
ADD COLUMN     "worktreeBranch" TEXT,
ADD COLUMN     "worktreeClosedAt" TIMESTAMP(3),
ADD COLUMN     "worktreePath" TEXT;
