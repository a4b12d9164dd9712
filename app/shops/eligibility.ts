/**
 * THE rule for "this shop can receive deliveries": installed, connected (a stored key) and not
 * paused by a rejected key. Queued work of any other shop waits, and resumes when the rule holds.
 */
export interface ShopDeliveryState {
  serviceKeyEnc: string | null;
  pausedAt: Date | null;
  uninstalledAt: Date | null;
}

export function canReceiveDeliveries(shop: ShopDeliveryState | null | undefined): boolean {
  return Boolean(shop?.serviceKeyEnc) && !shop?.pausedAt && !shop?.uninstalledAt;
}

/** The same rule as a SQL condition on the "Shop" row aliased `alias`. */
export function canReceiveDeliveriesSql(alias: string): string {
  return `${alias}."serviceKeyEnc" IS NOT NULL AND ${alias}."pausedAt" IS NULL AND ${alias}."uninstalledAt" IS NULL`;
}
