/**
 * Ids for rows this code inserts itself (the hot statements), in the shape of Prisma's `cuid()`
 * default that the model API gives the same tables: 25 characters, `c`, the time in base 36, a
 * counter, random characters. Ids made by one process sort in the order they were made (time, then
 * counter), which the lists that break a tie of `createdAt` by `id` rely on, as with Prisma's.
 */
import { randomBytes } from "node:crypto";

let counter = 0;

export function newRowId(): string {
  counter = (counter + 1) % 36 ** 4;
  const time = Date.now().toString(36).padStart(8, "0");
  const count = counter.toString(36).padStart(4, "0");
  let random = "";
  for (const byte of randomBytes(12)) random += (byte % 36).toString(36);
  return `c${time}${count}${random}`;
}
