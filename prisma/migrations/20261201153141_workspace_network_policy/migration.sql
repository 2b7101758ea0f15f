-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN "networkDomains" TEXT;
ALTER TABLE "Workspace" ADD COLUMN "networkPolicy" TEXT;
