-- AlterTable
ALTER TABLE "Session" ADD COLUMN "searchText" TEXT;

-- Backfill: the prompts already in the log (replies are added from now on).
UPDATE "Session" SET "searchText" = substr(lower((
  SELECT group_concat(json_extract(e."payload", '$.text'), ' ') FROM "SessionEvent" e
  WHERE e."sessionId" = "Session"."id" AND e."kind" = 'prompt' AND json_valid(e."payload")
)), 1, 20000);
