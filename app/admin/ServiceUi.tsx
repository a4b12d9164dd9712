import { useRevalidator, useSearchParams } from "@remix-run/react";
import { Banner, BlockStack, Box, Button, InlineStack, Layout, Pagination, Text } from "@shopify/polaris";
import { useEffect, useRef, type ReactNode } from "react";
import type { ServiceProblem } from "./service-errors";
import { SectionCard } from "./ui";

/** A page of the service the shop cannot reach: not connected, or paused by a rejected key. */
export function ServiceUnavailable({ service, what }: { service: { state: string; pauseReason: string | null }; what: string }) {
  const paused = service.state === "paused";
  return (
    <SectionCard
      title={paused ? "Sync is paused: the marketing service rejected your API key" : "Connect your email marketing account"}
      description={
        paused
          ? `${service.pauseReason ? `${service.pauseReason}. ` : ""}${what} come from your marketing account; paste a valid key on the Connection page to see them again.`
          : `${what} live in your marketing account. Connect it on the Connection page to see them here.`
      }
      inlineAlign="start"
    >
      <Button url="/app/connection" variant="primary">
        {paused ? "Update the API key" : "Connect account"}
      </Button>
    </SectionCard>
  );
}

/** The card a page shows while no marketing account is connected (also Problems and Activity: their emptiness means nothing then). */
export function NotConnectedCard() {
  return (
    <SectionCard title="Connect your email marketing account" description="Nothing is sent until you connect your marketing account." inlineAlign="start">
      <Button url="/app/connection" variant="primary">
        Connect account
      </Button>
    </SectionCard>
  );
}

/** A link the service hands off (dashboard, editor, preview): always a new tab. */
export function HandOffLink({ url, children }: { url: string; children: ReactNode }) {
  return (
    <a href={url} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

/** A refused action or load, in the merchant's words, with the service's links and what to do next. */
export function ProblemBanner({ problem, children }: { problem: ServiceProblem; children?: ReactNode }) {
  const tone = problem.kind === "review_required" || problem.kind === "rate_limited" ? "warning" : "critical";
  const ref = useRef<HTMLDivElement>(null);
  // The action may have been started far down the page: bring the answer into view.
  useEffect(() => {
    ref.current?.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }, [problem]);
  return (
    <div ref={ref} style={{ scrollMarginTop: 56 }}>
      <Banner tone={tone} title={problem.title}>
        <BlockStack gap="200">
          <p>{problem.message}</p>
          {problem.upgrade && (
            <p data-upgrade>
              Plan: {problem.upgrade.levelName} · {problem.upgrade.monthlyAmount.toFixed(2)} a month · {problem.upgrade.proratedAmount.toFixed(2)} now (prorated)
            </p>
          )}
          {(problem.links?.length || children) && (
            <InlineStack gap="300" blockAlign="center">
              {problem.links?.map((l) =>
                l.external ? (
                  <HandOffLink key={l.url} url={l.url}>
                    {l.label} ↗
                  </HandOffLink>
                ) : (
                  <Button key={l.url} url={l.url} variant="plain">
                    {l.label}
                  </Button>
                ),
              )}
              {children}
            </InlineStack>
          )}
        </BlockStack>
      </Banner>
    </div>
  );
}

/** Previous / next through a service list, keeping the other query parameters: the footer of
 * the list's card, or nothing when the list fits one page. */
export function PageNav({ page }: { page: { page: number; lastPage: number; total: number } | null }) {
  const [params, setParams] = useSearchParams();
  if (!page || page.lastPage <= 1) return null;
  const go = (n: number) => {
    const next = new URLSearchParams(params);
    next.set("page", String(n));
    setParams(next);
  };
  return (
    <Box padding="300">
      <InlineStack align="center" blockAlign="center" gap="300">
        <Pagination hasPrevious={page.page > 1} onPrevious={() => go(page.page - 1)} hasNext={page.page < page.lastPage} onNext={() => go(page.page + 1)} />
        <Text as="span" tone="subdued">
          Page {page.page} of {page.lastPage} · {page.total} in all
        </Text>
      </InlineStack>
    </Box>
  );
}

/**
 * What a page shows instead of its list when the service did not answer: the reason and a way to
 * load the page again, never a table or an empty state that would read as "you have none".
 */
export function LoadFailed({ problem }: { problem: ServiceProblem }) {
  const revalidator = useRevalidator();
  return (
    <Layout.Section>
      <ProblemBanner problem={problem}>
        <Button onClick={() => revalidator.revalidate()} loading={revalidator.state === "loading"}>
          Try again
        </Button>
      </ProblemBanner>
    </Layout.Section>
  );
}
