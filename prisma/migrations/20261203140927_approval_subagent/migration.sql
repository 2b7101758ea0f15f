-- AlterTable
ALTER TABLE "Approval" ADD COLUMN "agentDescription" TEXT;
ALTER TABLE "Approval" ADD COLUMN "agentId" TEXT;
