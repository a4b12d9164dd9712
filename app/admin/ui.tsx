import { isRouteErrorResponse, useRevalidator, useRouteError } from "@remix-run/react";
import {
  Banner,
  BlockStack,
  Box,
  Card,
  InlineStack,
  Layout,
  Page,
  SkeletonBodyText,
  SkeletonDisplayText,
  SkeletonPage,
  Text,
  type BlockStackProps,
} from "@shopify/polaris";
import { useEffect, type ReactNode, type RefObject } from "react";

interface AppBridge {
  toast?: { show(message: string, options?: { isError?: boolean; duration?: number }): void };
}

/** A toast through App Bridge (the admin shows it outside the iframe). */
export function showToast(message: string, options?: { isError?: boolean }): void {
  if (typeof window === "undefined") return;
  (window as { shopify?: AppBridge }).shopify?.toast?.show(message, options);
}

/**
 * Shows a toast once per new action result that carries one, unless the result is an error: a toast
 * vanishes, and Built for Shopify wants errors shown where they happened and kept until dealt with.
 * A page shows an error result beside its field, or with ActionError.
 */
export function useToast(result: { toast?: string; error?: boolean; at?: number } | undefined): void {
  useEffect(() => {
    if (result?.toast && !result.error) showToast(result.toast);
  }, [result]);
}

/** An action's error result in words, in the page (a layout section) until the next action. */
export function ActionError({ result }: { result: { ok?: boolean; toast?: string; error?: boolean } | undefined }) {
  if (!result?.error || !result.toast) return null;
  return (
    <Layout.Section>
      <Banner tone="critical" title={result.toast} />
    </Layout.Section>
  );
}

/**
 * The admin's card, the building block of its pages: a heading (with a badge beside it, a subdued
 * description under it, actions on its right), the body, then a footer. Every part is optional: an
 * untitled card is only its body. A `flush` card holds a table edge to edge: the heading gets the
 * padding and the body none. In a layout section of its own unless `section` is false (a grid cell,
 * an annotated section).
 */
/**
 * Reads the page's loader again every `everyMs` while `active` and the tab is visible, so a page
 * showing work under way (an import, a replay, delivery totals) moves without a reload.
 */
export function useRefreshWhile(active: boolean, everyMs: number): void {
  const revalidator = useRevalidator();
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible" && revalidator.state === "idle") revalidator.revalidate();
    }, everyMs);
    return () => clearInterval(timer);
  }, [active, everyMs, revalidator]);
}

/**
 * Makes every region inside `ref` that scrolls sideways (Polaris' tables on a narrow window) and has
 * nothing focusable in it reachable by Tab, so a keyboard alone can scroll it (axe's
 * scrollable-region-focusable). Polaris gives its scroll containers no tabindex, and whether one
 * scrolls depends on the window, so this is checked whenever the page's content or size changes.
 */
export function useFocusableScrollRegions(ref: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const root = ref.current;
    if (!root) return;
    const focusable = "a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex=\"-1\"])";
    const mark = () => {
      for (const el of root.querySelectorAll<HTMLElement>(".Polaris-IndexTable-ScrollContainer, .Polaris-DataTable__ScrollContainer")) {
        const scrolls = el.scrollWidth > el.clientWidth;
        const marked = el.dataset.scrollFocus === "1";
        if (scrolls && !marked && !el.querySelector(focusable)) {
          el.tabIndex = 0;
          el.dataset.scrollFocus = "1";
        } else if (!scrolls && marked) {
          el.removeAttribute("tabindex");
          delete el.dataset.scrollFocus;
        }
      }
    };
    mark();
    const observer = new MutationObserver(mark);
    observer.observe(root, { childList: true, subtree: true });
    window.addEventListener("resize", mark);
    return () => {
      observer.disconnect();
      window.removeEventListener("resize", mark);
    };
  }, [ref]);
}

export function SectionCard({
  title,
  badge,
  description,
  actions,
  footer,
  flush = false,
  gap = "300",
  inlineAlign,
  variant,
  section = true,
  children,
}: {
  title?: ReactNode;
  /** Shown beside the title (a status badge, a count). */
  badge?: ReactNode;
  /** Under the title: text is shown subdued, anything else as it is. */
  description?: ReactNode;
  /** On the right of the heading (a link, a button, a note). */
  actions?: ReactNode;
  /** Under the body (pagination, a note under a table). */
  footer?: ReactNode;
  flush?: boolean;
  gap?: BlockStackProps["gap"];
  inlineAlign?: BlockStackProps["inlineAlign"];
  variant?: "oneHalf" | "oneThird" | "fullWidth";
  section?: boolean;
  children?: ReactNode;
}) {
  const heading = title ? (
    <Text as="h2" variant="headingMd">
      {title}
    </Text>
  ) : null;
  const titleRow = badge ? (
    <InlineStack gap="200" blockAlign="center">
      {heading}
      {badge}
    </InlineStack>
  ) : (
    heading
  );
  const about =
    typeof description === "string" ? (
      <Text as="p" tone="subdued">
        {description}
      </Text>
    ) : (
      description
    );
  const withActions = (head: ReactNode) =>
    actions ? (
      <InlineStack align="space-between" blockAlign="center" gap="200">
        {head}
        {actions}
      </InlineStack>
    ) : (
      head
    );
  const card = flush ? (
    <Card padding="0">
      {title && (
        <Box padding="400">
          {withActions(
            <BlockStack gap="100">
              {titleRow}
              {about}
            </BlockStack>,
          )}
        </Box>
      )}
      {children}
      {footer}
    </Card>
  ) : (
    <Card>
      <BlockStack gap={gap} inlineAlign={inlineAlign}>
        {title && withActions(titleRow)}
        {about}
        {children}
        {footer}
      </BlockStack>
    </Card>
  );
  return section ? <Layout.Section variant={variant}>{card}</Layout.Section> : card;
}

/** What a list or table shows when it has nothing to show (`heading` when it stands for the page). */
export function EmptyState({ title, hint, heading = false }: { title: ReactNode; hint?: ReactNode; heading?: boolean }) {
  return (
    <Box padding="600">
      <BlockStack gap="200" inlineAlign="center">
        <Text as={heading ? "h2" : "p"} variant="headingMd" alignment="center">
          {title}
        </Text>
        {hint && (
          <Text as="p" tone="subdued" alignment="center">
            {hint}
          </Text>
        )}
      </BlockStack>
    </Box>
  );
}

/** What a page says when the thing its link names does not exist (a 404 from its loader). */
export interface NotFound {
  title: string;
  banner: string;
  hint: string;
  back: { content: string; url: string };
}

/** A page-level error: what went wrong in words, never a stack trace. */
export function PageError({ title, notFound }: { title: string; notFound?: NotFound }) {
  const error = useRouteError();
  // Shopify's auth responses (401, redirects) must reach the browser as they are.
  if (isRouteErrorResponse(error) && error.status < 500 && error.status !== 404) throw error;
  if (notFound && isRouteErrorResponse(error) && error.status === 404) {
    return (
      <Page title={notFound.title} backAction={notFound.back}>
        <Layout>
          <Layout.Section>
            <Banner tone="warning" title={notFound.banner}>
              <p>{notFound.hint}</p>
            </Banner>
          </Layout.Section>
        </Layout>
      </Page>
    );
  }
  const detail = isRouteErrorResponse(error) && error.status === 404 ? "This page does not exist." : "Something went wrong while loading this page.";
  return (
    <Page title={title}>
      <Layout>
        <Layout.Section>
          <Banner tone="critical" title="This page could not be loaded">
            <p>{detail} Reload the page to try again; if it keeps happening, contact support.</p>
          </Banner>
        </Layout.Section>
      </Layout>
    </Page>
  );
}

/** The loading state of a page (shown by routes while their data is on its way). */
export function PageSkeleton({ title }: { title: string }) {
  return (
    <SkeletonPage title={title}>
      <Layout>
        <Layout.Section>
          <Card>
            <BlockStack gap="300">
              <SkeletonDisplayText size="small" />
              <SkeletonBodyText lines={4} />
            </BlockStack>
          </Card>
        </Layout.Section>
      </Layout>
    </SkeletonPage>
  );
}

export function formatNumber(n: number): string {
  return new Intl.NumberFormat("en-US").format(n);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return "none";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  return `${(m / 60).toFixed(1)} h`;
}

/**
 * A moment as the merchant reads it: in the store's time zone (`timeZone`, from storeTimeZone) with
 * its abbreviation ("Nov 25, 2026, 11:57 AM EST"), or in UTC when no zone is given.
 */
export function formatWhen(iso: string | null, timeZone?: string): string {
  if (!iso) return "never";
  if (!timeZone || timeZone === "UTC") {
    return new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(new Date(iso)) + " UTC";
  }
  const parts = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short", timeZone }).format(new Date(iso));
  const zone = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "short" }).formatToParts(new Date(iso)).find((p) => p.type === "timeZoneName")?.value;
  return zone ? `${parts} ${zone}` : parts;
}

/** Technical text kept for support staff, folded away under the plain words the merchant reads. */
export function SupportDetails({ children }: { children: ReactNode }) {
  return (
    <details>
      <summary style={{ cursor: "pointer", color: "var(--p-color-text-secondary)", fontSize: "var(--p-font-size-300)" }}>Details for support</summary>
      <div style={{ whiteSpace: "normal", wordBreak: "break-word", fontSize: "var(--p-font-size-300)", color: "var(--p-color-text-secondary)" }}>{children}</div>
    </details>
  );
}

export { Text };
