import { Redis } from "ioredis";
import { createRedisRateGate } from "./src/reply/redis-rate-gate.ts";
import { createThrottledEditor } from "./src/reply/throttled-editor.ts";
import { pacingGlobalFor, pacingIntervalFor, pacingTakesCredits } from "./src/app/pacing.ts";
const redis = new Redis();
let calls = 0; const orig = redis.evalsha.bind(redis);
(redis as any).evalsha = (...a: any[]) => { calls++; return orig(...a).then((r: any) => { if (process.env.V) console.log(Date.now() % 100000, a[0].slice(0,6), JSON.stringify(r)); return r; }); };
const gate = createRedisRateGate({ redis, prefix: "repro" + Date.now(), intervalFor: pacingIntervalFor(), globalFor: pacingGlobalFor, creditsFor: pacingTakesCredits });
let sent = 0;
const spacing = { minIntervalMs: 250 } as any;
const ed = createThrottledEditor<string>({ chatKey: "telegram:1001:draft", gate, spacing, apply: async () => { sent++; await new Promise(r => setTimeout(r, 5)); } });
let text = "";
for (let i = 0; i < 120; i++) { text += " w" + i; ed.update(text); await new Promise(r => setTimeout(r, 25)); }
await ed.cancel();
console.log("sent", sent, "evalsha", calls);
redis.disconnect();
