/** MULTI/EXEC with errors surfaced: ioredis reports per-command errors inside the result instead of rejecting. */
import type { ChainableCommander } from "ioredis";

/** Runs the transaction; rejects if it was aborted or any command in it failed. */
export async function execOrThrow(multi: ChainableCommander): Promise<void> {
  const results = await multi.exec();
  if (!results) throw new Error("Redis transaction aborted");
  for (const [error] of results) if (error) throw error;
}
