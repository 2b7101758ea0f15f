-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN "trustedSettingsDigest" TEXT;
