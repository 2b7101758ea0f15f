-- CreateTable
CREATE TABLE "SidecarNode" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "url" TEXT,
    "startedAt" DATETIME NOT NULL,
    "heartbeatAt" DATETIME NOT NULL,
    "freeMb" INTEGER NOT NULL DEFAULT 0,
    "liveSessions" INTEGER NOT NULL DEFAULT 0,
    "stoppedAt" DATETIME,
    "adoptedById" TEXT,
    "adoptedAt" DATETIME
);

-- CreateTable
CREATE TABLE "SessionLease" (
    "sessionId" TEXT NOT NULL PRIMARY KEY,
    "ownerId" TEXT NOT NULL,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "expiresAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "SessionLease_ownerId_idx" ON "SessionLease"("ownerId");
