-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "agentDescription" TEXT,
ADD COLUMN     "agentId" TEXT;
