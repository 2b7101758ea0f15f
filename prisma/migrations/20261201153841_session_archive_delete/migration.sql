-- AlterTable
ALTER TABLE "Session" ADD COLUMN "archivedAt" DATETIME;
ALTER TABLE "Session" ADD COLUMN "deletedAt" DATETIME;
ALTER TABLE "Session" ADD COLUMN "deletedById" TEXT;
