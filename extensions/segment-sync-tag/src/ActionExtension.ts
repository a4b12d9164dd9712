/**
 * The Use segment modal's "Sync as a tag": the merchant ticks it and saves, and the app mirrors
 * the segment (its members get the tag `shopify-segment:<name>` in the marketing service, kept up
 * to date as customers join and leave). Polaris web components built with the DOM (API 2026-04):
 * no UI framework is bundled.
 */
import { shopifyApi } from "./admin-api";
import { segmentState, startMirroring, type MirrorAnswer } from "./mirror";

function element(tag: string, attributes: Record<string, string> = {}, text?: string): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value);
  if (text !== undefined) el.textContent = text;
  return el;
}

export default async () => {
  const shopify = shopifyApi();
  const segmentId = shopify.data.selected[0]?.id ?? "";

  const action = element("s-admin-action", { heading: "Sync as a tag" });
  const stack = element("s-stack", { gap: "base" });
  const message = element("s-paragraph");
  const choice = element("s-checkbox", { label: "Sync this segment as a tag in your marketing account" });
  const problem = element("s-banner", { tone: "critical", hidden: "" });
  const save = element("s-button", { slot: "primary-action", variant: "primary" }, "Save");
  const cancel = element("s-button", { slot: "secondary-actions" }, "Cancel");
  stack.append(message, choice, problem);
  action.append(stack, save, cancel);
  document.body.append(action);

  const show = (answer: MirrorAnswer) => {
    if (!answer.ok) {
      problem.textContent = answer.error;
      problem.removeAttribute("hidden");
      return;
    }
    problem.setAttribute("hidden", "");
    if (answer.segment) {
      message.textContent = `Customers in this segment have the tag “${answer.segment.tag}” in your marketing account, kept up to date as they join and leave. To stop, untick it in the app's Settings.`;
      choice.setAttribute("checked", "");
      choice.setAttribute("disabled", "");
      save.setAttribute("disabled", "");
    } else {
      message.textContent = "Its customers get a tag in your marketing account, added and removed as they join and leave the segment, for your automations and campaigns.";
    }
  };

  cancel.addEventListener("click", () => shopify.close());
  save.addEventListener("click", async () => {
    if (!(choice as HTMLElement & { checked?: boolean }).checked) return shopify.close();
    save.setAttribute("loading", "");
    const answer = await startMirroring(fetch, segmentId);
    save.removeAttribute("loading");
    show(answer);
    if (answer.ok) cancel.textContent = "Close";
  });

  action.setAttribute("loading", "");
  show(await segmentState(fetch, segmentId));
  action.removeAttribute("loading");
};
