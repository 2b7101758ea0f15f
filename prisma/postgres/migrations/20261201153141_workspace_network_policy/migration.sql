-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "networkDomains" TEXT,
ADD COLUMN     "networkPolicy" TEXT;
