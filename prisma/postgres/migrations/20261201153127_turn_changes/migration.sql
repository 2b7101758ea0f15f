-- CreateTable
CREATE TABLE "TurnChange" (
    "id" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "promptSeq" INTEGER,
    "beforeCommit" TEXT,
    "afterCommit" TEXT,
    "status" TEXT NOT NULL DEFAULT 'ok',
    "files" TEXT NOT NULL DEFAULT '[]',
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TurnChange_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "TurnChange_sessionId_createdAt_idx" ON "TurnChange"("sessionId", "createdAt");

-- AddForeignKey
ALTER TABLE "TurnChange" ADD CONSTRAINT "TurnChange_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
