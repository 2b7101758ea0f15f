-- CreateTable
CREATE TABLE "SidecarNode" (
    "id" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "url" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "heartbeatAt" TIMESTAMP(3) NOT NULL,
    "freeMb" INTEGER NOT NULL DEFAULT 0,
    "liveSessions" INTEGER NOT NULL DEFAULT 0,
    "stoppedAt" TIMESTAMP(3),
    "adoptedById" TEXT,
    "adoptedAt" TIMESTAMP(3),

    CONSTRAINT "SidecarNode_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SessionLease" (
    "sessionId" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SessionLease_pkey" PRIMARY KEY ("sessionId")
);

-- CreateIndex
CREATE INDEX "SessionLease_ownerId_idx" ON "SessionLease"("ownerId");
