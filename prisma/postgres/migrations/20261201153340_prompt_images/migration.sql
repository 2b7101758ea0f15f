-- CreateTable
CREATE TABLE "PromptImage" (
    "id" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "mediaType" TEXT NOT NULL,
    "bytes" INTEGER NOT NULL,
    "name" TEXT,
    "data" BYTEA NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PromptImage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "PromptImage_sessionId_idx" ON "PromptImage"("sessionId");

-- AddForeignKey
ALTER TABLE "PromptImage" ADD CONSTRAINT "PromptImage_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
