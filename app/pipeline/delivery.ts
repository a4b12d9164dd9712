import { z } from "zod";

/**
 * A webhook delivery as the route hands it to the recorder (app/pipeline/record.server.ts) once
 * authenticated (app/webhooks/receive.server.ts): no headers, only what is recorded. PGlite's
 * acknowledgement journal reads it back with this schema.
 */
export const verifiedDeliverySchema = z.object({
  shop: z.string(),
  topic: z.string(),
  webhookId: z.string(),
  eventId: z.string().nullable(),
  triggeredAt: z.string().nullable(),
  apiVersion: z.string().nullable(),
  rawBody: z.string(),
});
export type VerifiedDelivery = z.infer<typeof verifiedDeliverySchema>;
