/** The queue dashboard (bull-board) under /admin/queues; the ops HTTP server checks ADMIN_TOKEN before it. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import express from "express";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Config } from "../config/env-schema.js";
import { QUEUE_NAME } from "../redis/keys.js";

/** Builds the dashboard's request handler for the message queue under KEY_PREFIX. */
export function createAdminHandler(
  config: Pick<Config, "KEY_PREFIX">,
  redis: Redis,
): (req: IncomingMessage, res: ServerResponse) => void {
  const basePath = "/admin/queues";
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(basePath);
  const queue = new Queue(QUEUE_NAME, { connection: redis, prefix: config.KEY_PREFIX });
  createBullBoard({
    queues: [new BullMQAdapter(queue, { readOnlyMode: false, displayName: `${config.KEY_PREFIX} messages` })],
    serverAdapter,
    options: { uiConfig: { boardTitle: "chatbot queues" } },
  });
  const app = express();
  app.disable("x-powered-by");
  app.use(basePath, serverAdapter.getRouter());
  return (req, res) => app(req, res);
}
