-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "searchText" TEXT;

-- Backfill: the prompts already in the log (replies are added from now on).
UPDATE "Session" SET "searchText" = substr(lower((
  SELECT string_agg(e."payload"::json->>'text', ' ' ORDER BY e."seq") FROM "SessionEvent" e
  WHERE e."sessionId" = "Session"."id" AND e."kind" = 'prompt'
)), 1, 20000);
